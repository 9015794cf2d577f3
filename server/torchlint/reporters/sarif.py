"""SARIF 2.1.0 for GitHub code scanning and other SARIF consumers."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections import Counter

from torchlint import __version__
from torchlint.docs import rule_markdown
from torchlint.engine.source import split_lines
from torchlint.findings import Finding, Severity
from torchlint.registry import rules

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _repo_root() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, timeout=5)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return os.getcwd()


def _uri(path: str, root: str) -> str:
    rel = os.path.relpath(os.path.abspath(path), root)
    if rel.startswith(".."):
        rel = os.path.abspath(path)
    return rel.replace(os.sep, "/")


def _line_text(path: str, line: int, cache: dict) -> str:
    if path not in cache:
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                cache[path] = split_lines(fh.read())
        except OSError:
            cache[path] = []
    lines = cache[path]
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


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
    root = _repo_root()
    cache: dict = {}
    seen: Counter = Counter()
    results = []
    for f in findings:
        uri = _uri(f.path, root)
        text = _line_text(f.path, f.line, cache)
        base = f"{f.code}:{uri}:{text}"
        seen[base] += 1
        fingerprint = hashlib.sha256(f"{base}:{seen[base]}".encode()).hexdigest()[:32]
        results.append(
            {
                "ruleId": f.code,
                "ruleIndex": index[f.code],
                "level": _LEVEL[f.severity],
                "message": {"text": f.message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"},
                            "region": {
                                "startLine": f.line,
                                "startColumn": f.column,
                                "endLine": f.end_line,
                                "endColumn": max(f.end_column, f.column),
                            },
                        }
                    }
                ],
                "partialFingerprints": {"primaryLocationLineHash": fingerprint},
            }
        )
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
                "originalUriBaseIds": {"%SRCROOT%": {"uri": "file://" + root.replace(os.sep, "/").rstrip("/") + "/"}},
                "results": results,
            }
        ],
    }
    return json.dumps(doc, indent=2) + "\n"
