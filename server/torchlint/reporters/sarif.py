"""SARIF 2.1.0 for GitHub code scanning and other SARIF consumers.

A result carries its fix only when the fix is safe: SARIF has no notion of an
unsafe fix, and consumers offer `fixes` for one-click application. A notebook's
fix is left out too: its edits are in cell coordinates, not in the .ipynb's JSON.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from pathlib import Path
from urllib.parse import quote

from torchlint import __version__
from torchlint.docs import rule_markdown
from torchlint.findings import Applicability, Finding, Fix, Severity
from torchlint.registry import rules
from torchlint.reporters.locations import Location, Locator, message

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _result(f: Finding, at: Location, rel: str | None, rule_index: int, seen: Counter) -> dict:
    if rel is None:  # outside the repository: an absolute URI, no base
        artifact = {"uri": Path(os.path.abspath(at.file)).as_uri()}
    else:
        artifact = {"uri": quote(rel), "uriBaseId": "%SRCROOT%"}
    physical: dict = {"artifactLocation": artifact}
    if at.region is not None:
        line, column, end_line, end_column = at.region
        physical["region"] = {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column}
    # Stable across commits: no line number (or cell number) in it, only what the line says and which
    # occurrence of the same rule on the same text in the file it is.
    base = f"{f.code}:{rel or at.file}:{' '.join(at.text.split())}"
    seen[base] += 1
    result = {
        "ruleId": f.code,
        "ruleIndex": rule_index,
        "level": _LEVEL[f.severity],
        "message": {"text": message(f, at)},
        "locations": [{"physicalLocation": physical}],
        "partialFingerprints": {
            "primaryLocationLineHash": hashlib.sha256(f"{base}:{seen[base]}".encode()).hexdigest()[:32]
        },
    }
    if at.cell is not None:
        result["properties"] = {"cell": at.cell, "cellLine": f.line, "cellColumn": f.column}
    else:
        fixes = [_fix(fx, artifact) for fx in f.fixes() if fx.applicability is not Applicability.DISPLAY]
        if fixes:
            result["fixes"] = fixes
    return result


def _fix(fix: Fix, artifact: dict) -> dict:
    """A SARIF fix; its applicability and (for an unsafe one) what it may change are in its properties and,
    for readers that show only the description, in the description's text."""
    text = fix.message if fix.applicability is Applicability.SAFE else f"{fix.message} (unsafe: {fix.risk})"
    replacements = [
        {
            "deletedRegion": {
                "startLine": e.line,
                "startColumn": e.column,
                "endLine": e.end_line,
                "endColumn": e.end_column,
            },
            "insertedContent": {"text": e.content},
        }
        for e in fix.edits
    ]
    return {
        "description": {"text": text},
        "artifactChanges": [{"artifactLocation": artifact, "replacements": replacements}],
        "properties": {"applicability": fix.applicability.value, "risk": fix.risk},
    }


def render(findings: list[Finding], **_) -> str:
    catalogue = rules()
    used = sorted({f.code for f in findings} | set(catalogue))
    index = {code: i for i, code in enumerate(used)}
    descriptors = []
    for code in used:
        cls = catalogue.get(code)
        if cls is None:  # TL000
            descriptors.append(
                {
                    "id": code,
                    "name": "parse-error",
                    "shortDescription": {"text": "File could not be read or parsed"},
                    "fullDescription": {"text": "torchlint could not decode or parse this file, so no rule ran on it."},
                    "help": {
                        "text": "Fix the syntax or encoding error.",
                        "markdown": "Fix the syntax or encoding error.",
                    },
                    "defaultConfiguration": {"level": "error"},
                }
            )
            continue
        md = rule_markdown(cls)
        descriptors.append(
            {
                "id": code,
                "name": cls.name,
                "shortDescription": {"text": cls.summary},
                "fullDescription": {"text": cls.what},
                "help": {"text": cls.why, "markdown": md},
                "helpUri": f"https://github.com/torchlint/torchlint/blob/main/docs/rules/{code}.md",
                "defaultConfiguration": {"level": _LEVEL[cls.severity]},
                "properties": {"tags": ["pytorch", "correctness"]},
            }
        )
    locator = Locator()
    seen: Counter = Counter()
    results = []
    for f in findings:
        at = locator.locate(f)
        results.append(_result(f, at, locator.relative(at.file), index[f.code], seen))
    doc = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "torchlint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": "https://github.com/torchlint/torchlint",
                        "rules": descriptors,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "originalUriBaseIds": {"%SRCROOT%": {"uri": Path(locator.root).as_uri().rstrip("/") + "/"}},
                "results": results,
            }
        ],
    }
    return json.dumps(doc, indent=2) + "\n"
