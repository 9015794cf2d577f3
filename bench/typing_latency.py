"""Typing inside a training loop, as an editor sends it (issue 30 item 12), beside a bare parse.

The language server is started as an editor starts it (workspace folder = the checkout holding the
file) on a real `.py` file or a real notebook. After the first diagnostics, the cursor goes to the end
of the first `.backward(` line inside a `for` loop (a training loop), Enter is pressed (a newline and
the line's indentation) and `TYPED` is typed one character at a time, then the line is deleted again:
each keystroke is one ranged `didChange` (`notebookDocument/didChange` for a cell), sent `PAUSE` s
after the previous answer, so each is linted alone, and its latency is didChange -> the
publishDiagnostics of that document (that cell). Half-typed states that do not parse
(`step_count +=`) are part of it, as they are of typing.

Each run is one fresh server per (file, selection); a bare `libcst.parse_module` of the same text
(for a notebook: the joined program torchlint lints) runs right after it in a fresh interpreter, so
both sides keep the same process order in every repetition. Reported: the median over runs of each
run's p50 and p95, with the smallest and largest run beside it.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.lsp_latency import Client

PAUSE = 0.4  # seconds between keystrokes: longer than the server's debounce, so none is coalesced
TYPED = "step_count += 1"
SELECTIONS = {"default": None, "ALL": ["ALL"]}


@dataclass(frozen=True)
class Site:
    """Where typing happens: the end of `line` (0-based) of `part` (the file, or a cell's index)."""

    part: int
    line: int
    column: int
    indent: str


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def loop_site(lines: list[str]) -> tuple[int, str] | None:
    """The first `.backward(` line inside a `for` loop, and its indentation."""
    for i, line in enumerate(lines):
        if ".backward(" not in line or line.lstrip().startswith("#"):
            continue
        depth = len(_indent(line))
        for above in reversed(lines[:i]):
            if not above.strip() or len(_indent(above)) >= depth:
                continue
            if re.match(r"\s*(async\s+)?for .*:\s*(#.*)?$", above):
                return i, _indent(line)
            depth = len(_indent(above))
            if depth == 0:
                break
    return None


def keystrokes(site: Site) -> list[tuple[tuple[int, int, int, int], str]]:
    """(range, text) of each edit: Enter, each typed character, then the line deleted again."""
    line, col = site.line, site.column
    edits = [((line, col, line, col), "\n" + site.indent)]
    at = len(site.indent)
    for ch in TYPED:
        edits.append(((line + 1, at, line + 1, at), ch))
        at += 1
    edits.append(((line, col, line + 1, at), ""))
    return edits


def _range(r: tuple[int, int, int, int]) -> dict:
    return {"start": {"line": r[0], "character": r[1]}, "end": {"line": r[2], "character": r[3]}}


class Document:
    """A `.py` file or a notebook as the server sees it: how to open it and send one keystroke."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.uri = path.resolve().as_uri()
        self.notebook = path.suffix == ".ipynb"
        if self.notebook:
            raw = json.loads(path.read_text(encoding="utf-8"))["cells"]
            self.cells = [
                (c["cell_type"], "".join(c["source"]) if isinstance(c["source"], list) else c["source"]) for c in raw
            ]
            self.cell_uris = [f"vscode-notebook-cell:{path.resolve()}#cell{i}" for i in range(len(self.cells))]
        else:
            self.text = path.read_text(encoding="utf-8")

    def site(self) -> Site:
        parts = (
            [(i, text) for i, (kind, text) in enumerate(self.cells) if kind == "code"]
            if self.notebook
            else [(0, self.text)]
        )
        for part, text in parts:
            lines = text.split("\n")
            found = loop_site(lines)
            if found:
                return Site(part, found[0], len(lines[found[0]]), found[1])
        raise SystemExit(f"{self.path}: no `.backward(` inside a `for` loop to type in")

    def target(self, site: Site) -> str:
        """The URI whose diagnostics answer a keystroke."""
        return self.cell_uris[site.part] if self.notebook else self.uri

    def open(self, client: Client) -> None:
        if not self.notebook:
            item = {"uri": self.uri, "languageId": "python", "version": 1, "text": self.text}
            client.send("textDocument/didOpen", {"textDocument": item})
            return
        kinds = {"markdown": 1, "code": 2}
        cells = [{"kind": kinds.get(k, 1), "document": u} for (k, _), u in zip(self.cells, self.cell_uris)]
        docs = [
            {"uri": u, "languageId": "python" if k == "code" else "markdown", "version": 1, "text": t}
            for (k, t), u in zip(self.cells, self.cell_uris)
        ]
        notebook = {"uri": self.uri, "notebookType": "jupyter-notebook", "version": 1, "cells": cells}
        client.send("notebookDocument/didOpen", {"notebookDocument": notebook, "cellTextDocuments": docs})

    def type(self, client: Client, site: Site, version: int, rng: tuple[int, int, int, int], text: str) -> None:
        change = {"range": _range(rng), "text": text}
        if not self.notebook:
            doc = {"uri": self.uri, "version": version}
            client.send("textDocument/didChange", {"textDocument": doc, "contentChanges": [change]})
            return
        content = {"document": {"uri": self.cell_uris[site.part], "version": version}, "changes": [change]}
        client.send(
            "notebookDocument/didChange",
            {
                "notebookDocument": {"uri": self.uri, "version": version},
                "change": {"cells": {"textContent": [content]}},
            },
        )

    def program(self) -> str:
        """The text a bare parse gets: the file, or the notebook's code cells joined as torchlint lints them."""
        if not self.notebook:
            return self.text
        from torchlint.notebook import Cell, build

        return build([Cell(i, text, kind) for i, (kind, text) in enumerate(self.cells)]).text


def server_run(python: str, doc: Document, workspace: Path, select: list[str] | None) -> dict[str, float]:
    """First diagnostics and the latency of each keystroke, one fresh server."""
    options = {"settings": {"select": select}} if select else None
    site = doc.site()
    target = doc.target(site)
    client = Client([python, "-m", "torchlint", "server"])
    try:
        folder = workspace.resolve().as_uri()
        init = {
            "processId": os.getpid(),
            "rootUri": folder,
            "workspaceFolders": [{"uri": folder, "name": workspace.name}],
            "capabilities": {},
            "initializationOptions": options,
        }
        rid = client.send("initialize", init, request=True)
        client.wait_for(lambda m: m.get("id") == rid)
        client.send("initialized", {})

        def answered(version: int | None):
            def test(m: dict) -> bool:
                if m.get("method") != "textDocument/publishDiagnostics" or m["params"]["uri"] != target:
                    return False
                # a .py file's answer names its version; a cell's carries none (the notebook's edit is the last)
                return version is None or m["params"].get("version", version) == version

            return test

        start = time.perf_counter()
        doc.open(client)
        client.wait_for(answered(None))
        first = time.perf_counter() - start
        time.sleep(1.0)  # the project index settles (the server re-publishes once it is ready)
        latencies = []
        for version, (rng, text) in enumerate(keystrokes(site), start=2):
            start = time.perf_counter()
            doc.type(client, site, version, rng, text)
            client.wait_for(answered(None if doc.notebook else version))
            latencies.append(time.perf_counter() - start)
            time.sleep(PAUSE)
    finally:
        client.close()
    return {
        "first_s": first,
        "p50_ms": percentile(latencies, 50),
        "p95_ms": percentile(latencies, 95),
        "n": len(latencies),
    }


def percentile(values: list[float], q: int) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(len(ordered) * q / 100) - 1)] * 1000


PARSE = (
    "import sys, time, libcst\nt = open(sys.argv[1]).read()\nr = []\nfor _ in range(5):\n"
    "    s = time.perf_counter(); libcst.parse_module(t); r.append(time.perf_counter() - s)\nprint(sorted(r)[2])\n"
)


def parse_ms(python: str, doc: Document) -> float:
    import subprocess

    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(doc.program())
    try:
        out = subprocess.run([python, "-c", PARSE, fh.name], capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(fh.name)
    return float(out) * 1000


def spread(values: list[float], fmt: str = "{:.0f}") -> str:
    """The median, and the smallest and largest run."""
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}–{fmt.format(max(values))})"


def measure(python: str, files: list[Path], workspace_of, runs: int, selections: list[str]) -> list[str]:
    """The Markdown section: one row per (file, selection), `runs` repetitions in the same order each."""
    results: dict[tuple[Path, str], list[dict]] = {}
    for _ in range(runs):
        for file in files:
            doc = Document(file)
            for name in selections:
                r = server_run(python, doc, workspace_of(file), SELECTIONS[name])
                r["parse_ms"] = parse_ms(python, doc)
                results.setdefault((file, name), []).append(r)
                print(f"{file.name} {name}: {r}", flush=True)
    md = [
        "## Typing in a training loop",
        "",
        f"Generated by `python -m bench.workspace --typing ...`: {runs} runs, each a fresh server per file and",
        f"selection; per run, Enter at the end of the first `.backward(` line inside a `for` loop, `{TYPED}`",
        f"typed one character at a time, then the line deleted ({len(TYPED) + 2} keystrokes, {PAUSE} s apart);",
        "a bare `libcst.parse_module` of the same text (a notebook's joined code cells) right after each run.",
        "Median over runs, smallest–largest run in brackets.",
        "",
        "| file | lines | cells | selection | first diagnostics (s) | keystroke p50 (ms) | keystroke p95 (ms) | bare parse (ms) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (file, name), rs in results.items():
        doc = Document(file)
        text = doc.program()
        cells = f"{sum(k == 'code' for k, _ in doc.cells)} code / {len(doc.cells)}" if doc.notebook else "—"
        rel = file.resolve().relative_to(workspace_of(file).parent)
        md.append(
            f"| {rel} | {text.count(chr(10))} | {cells} | {name} | {spread([r['first_s'] for r in rs], '{:.2f}')} "
            f"| {spread([r['p50_ms'] for r in rs])} | {spread([r['p95_ms'] for r in rs])} "
            f"| {spread([r['parse_ms'] for r in rs])} |"
        )
    return md
