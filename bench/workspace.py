"""Editor speed in real workspaces (issue 32), for one build or two side by side.

python -m bench.workspace --python .venv/bin/python [--python ../base/.venv/bin/python]
    [--file REPO/path/to/train.py ...] [--scaling 100 1000 10000] [--env-check REPO/path/to/main.py]
    [--edits 15] [--typing REPO/train.py|REPO/nb.ipynb ... --runs 3 --select default ALL] [--out bench/]

For each `--file` (a file inside a checkout: its workspace is the nearest folder above it holding
`.git`), the language server is started as an editor starts it (workspace folder = the checkout) and
measured: first diagnostics after didOpen, then isolated edits (a statement inserted in a loop or
function body and removed again, 0.4 s apart, so the debounce does not coalesce them): median and p95
of didChange -> publishDiagnostics, beside a bare libcst parse of the same file in the same run.
`--env-check FILE`: `torchlint check FILE` wall time with no environment in its checkout and with a
6,000-file fake environment at `env/` (a pyvenv.cfg, git-ignored, files that name the script: what
a real one looks like to a text scan), and first diagnostics with it. `--scaling N...`: the same edit
in a generated project of N modules, plotted (edit_scaling.svg). `--typing FILE`: keystrokes typed
inside the file's training loop, a `.py` file or a notebook (bench/typing_latency.py), with each
`--select`ion, `--runs` times. Writes the sections it measured into WORKSPACE.md and keeps the others.
Installs and fetches nothing: point `--file` at checkouts you have (the README says which ones the note used).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import typing_latency
from bench.lsp_latency import Client

HERE = Path(__file__).resolve().parent
PAUSE = 0.4  # seconds between edits: longer than the server's debounce
PARSE = "import sys, time, libcst\nt = open(sys.argv[1]).read()\nr = []\nfor _ in range(5):\n    s = time.perf_counter(); libcst.parse_module(t); r.append(time.perf_counter() - s)\nprint(sorted(r)[2])\n"


def workspace_of(path: Path) -> Path:
    for folder in path.resolve().parents:
        if (folder / ".git").exists():
            return folder
    return path.resolve().parent


def edit_site(lines: list[str]) -> tuple[int, str]:
    """Where an edit goes: after the first `for` or `def forward` header (a loop body, a forward)."""
    for i, line in enumerate(lines):
        if re.match(r"\s*(for .*|def forward\(.*)\s*:\s*(#.*)?$", line) and i + 1 < len(lines):
            indent = re.match(r"\s*", lines[i + 1]).group(0) or "    "
            return i + 1, f"{indent}_bench_probe = 0"
    return len(lines), "_bench_probe = 0"


def server_run(python: str, file: Path, workspace: Path, edits: int) -> dict[str, float]:
    """First diagnostics and isolated-edit latencies of `file`, the server started in `workspace`."""
    text = file.read_text(encoding="utf-8")
    uri = file.resolve().as_uri()
    client = Client([python, "-m", "torchlint", "server"])
    try:
        folder = workspace.resolve().as_uri()
        rid = client.send(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": folder,
                "workspaceFolders": [{"uri": folder, "name": workspace.name}],
                "capabilities": {},
            },
            request=True,
        )
        client.wait_for(lambda m: m.get("id") == rid)
        client.send("initialized", {})
        start = time.perf_counter()
        client.send(
            "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}
        )

        def published(m: dict) -> bool:
            return m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri

        client.wait_for(published)
        first = time.perf_counter() - start
        time.sleep(1.0)  # the project index settles (the new build re-publishes once it is ready)
        lines = text.split("\n")
        at, statement = edit_site(lines)
        latencies = []
        for v in range(2, edits + 2):
            new = lines[:at] + [statement] + lines[at:] if v % 2 == 0 else lines
            start = time.perf_counter()
            client.send(
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": v}, "contentChanges": [{"text": "\n".join(new)}]},
            )
            client.wait_for(lambda m: published(m) and m["params"].get("version", v) == v)  # noqa: B023
            latencies.append(time.perf_counter() - start)
            time.sleep(PAUSE)
    finally:
        client.close()
    latencies.sort()
    return {
        "first_s": first,
        "median_ms": statistics.median(latencies) * 1000,
        "p95_ms": latencies[max(0, round(len(latencies) * 0.95) - 1)] * 1000,
    }


def parse_ms(python: str, file: Path) -> float:
    out = subprocess.run([python, "-c", PARSE, str(file)], capture_output=True, text=True, check=True).stdout
    return float(out) * 1000


def check_s(python: str, file: Path, workspace: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [python, "-m", "torchlint", "check", "--no-cache", "-q", "--exit-zero", str(file)],
        cwd=workspace,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    return time.perf_counter() - start


def fake_environment(folder: Path, stem: str, files: int = 6000) -> None:
    """A virtual environment's shape: pyvenv.cfg, lib/python3.x/site-packages/<pkg>/<module>.py."""
    (folder / "pyvenv.cfg").parent.mkdir(parents=True, exist_ok=True)
    (folder / "pyvenv.cfg").write_text("home = /usr/bin\ninclude-system-site-packages = false\n")
    site = folder / "lib" / "python3.11" / "site-packages"
    for i in range(files):
        module = site / f"pkg{i // 100}" / f"mod{i % 100}.py"
        module.parent.mkdir(parents=True, exist_ok=True)
        module.write_text(
            f'"""Module {i}: {stem} helpers."""\nimport os\n\n\ndef {stem}_{i}(x):\n    return os.path.join(x, "{stem}")\n'
        )


def scaling_project(root: Path, modules: int) -> Path:
    """`modules` generated modules in packages, and a training script that imports one of them and asks a
    whole-project question (a host sync per step is one only if no project file imports the script)."""
    (root / ".git").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'gen'\nversion = '0'\n")
    for i in range(modules):
        path = root / "gen" / f"p{i // 500}" / f"m{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.parent / "__init__.py").touch()
        (root / "gen" / "__init__.py").touch()
        path.write_text(
            f'"""Block {i} of the training code."""\nfrom torch import nn\n\n\n'
            f"class Block{i}(nn.Module):\n    def forward(self, x):\n        return x\n"
        )
    script = root / "train.py"
    script.write_text(
        "import torch\nfrom gen.p0.m0 import Block0\n\nmodel = Block0()\nopt = torch.optim.SGD(model.parameters(), 0.1)\n"
        "for x in range(10):\n    opt.zero_grad()\n    loss = model(torch.ones(2)).sum()\n    loss.backward()\n"
        "    opt.step()\n    print(loss.item())\n"
    )
    return script


def svg_plot(path: Path, series: dict[str, list[tuple[int, float]]]) -> None:
    """A small log-x line plot of p95 edit latency against project size, without matplotlib."""
    width, height, pad = 520, 300, 50
    xs = sorted({x for points in series.values() for x, _ in points})
    top = max(y for points in series.values() for _, y in points) * 1.15 or 1

    def px(x: int) -> float:
        span = (len(xs) - 1) or 1
        return pad + (width - 2 * pad) * xs.index(x) / span

    def py(y: float) -> float:
        return height - pad - (height - 2 * pad) * y / top

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-size="12">']
    parts.append(f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="black"/>')
    parts.append(f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="black"/>')
    for x in xs:
        parts.append(f'<text x="{px(x)}" y="{height - pad + 16}" text-anchor="middle">{x}</text>')
    parts.append(f'<text x="{pad}" y="{pad - 10}">edit p95 (ms), max {top / 1.15:.0f}</text>')
    parts.append(f'<text x="{width / 2}" y="{height - 10}" text-anchor="middle">project files</text>')
    for (name, points), colour in zip(series.items(), ["#1f77b4", "#d62728"]):
        coords = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in points)
        parts.append(f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2"/>')
        lx, ly = points[-1]
        parts.append(f'<text x="{px(lx) - 5}" y="{py(ly) - 8}" text-anchor="end" fill="{colour}">{name}</text>')
    parts.append("</svg>")
    path.write_text("\n".join(parts) + "\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.workspace", description=__doc__.split("\n\n")[0])
    p.add_argument("--python", action="append", required=True, help="a build's interpreter (repeat to compare)")
    p.add_argument("--file", action="append", default=[], type=Path, help="a file inside a checkout")
    p.add_argument("--env-check", type=Path, help="a script whose check is timed with and without env/")
    p.add_argument("--scaling", nargs="*", type=int, default=[], help="generated project sizes")
    p.add_argument("--edits", type=int, default=15)
    p.add_argument("--typing", action="append", default=[], type=Path, help="a .py file or notebook to type in")
    p.add_argument("--runs", type=int, default=3, help="repetitions of the typing measurement")
    p.add_argument("--select", nargs="+", default=["default", "ALL"], choices=sorted(typing_latency.SELECTIONS))
    p.add_argument("--out", type=Path, default=HERE)
    args = p.parse_args(argv)
    args.python = [str(Path(py).absolute()) for py in args.python]  # the checks run in the workspace
    names = [Path(py).parents[2].name for py in args.python]  # REPO/.venv/bin/python -> REPO
    md: list[str] = []
    if args.file:
        md += ["## Real files: first diagnostics and isolated edits", ""]
        md += [
            f"`python -m bench.workspace --file ...` ({' vs '.join(names)}), default selection, {args.edits} isolated edits."
        ]
        md += [""]
        md += ["| file | lines | build | first diagnostics (s) | edit median (ms) | edit p95 (ms) | bare parse (ms) |"]
        md += ["|---|---|---|---|---|---|---|"]
    for file in args.file:
        workspace = workspace_of(file)
        lines = file.read_text(encoding="utf-8").count("\n")
        for name, python in zip(names, args.python):
            r = server_run(python, file, workspace, args.edits)
            parse = parse_ms(python, file)
            rel = file.resolve().relative_to(workspace.parent)
            md.append(
                f"| {rel} | {lines} | {name} | {r['first_s']:.2f} | {r['median_ms']:.0f} | {r['p95_ms']:.0f} | {parse:.0f} |"
            )
            print(md[-1], flush=True)
    if args.env_check:
        file, workspace = args.env_check, workspace_of(args.env_check)
        env = workspace / "env"
        md += ["", "## A 6,000-file environment in the checkout", ""]
        md += [f"`torchlint check {file.name}` in {workspace.name}, with a 6,000-file environment at `env/`:", ""]
        md += [
            "| build | check, no env (s) | check, env/ (s) | ratio | first diagnostics, env/ (s) |",
            "|---|---|---|---|---|",
        ]
        exclude = workspace / ".git" / "info" / "exclude"  # git-ignored, as a user's env/ is
        before = exclude.read_text() if exclude.is_file() else None
        for name, python in zip(names, args.python):
            plain = min(check_s(python, file, workspace) for _ in range(2))
            fake_environment(env, file.stem)
            exclude.parent.mkdir(parents=True, exist_ok=True)
            exclude.write_text((before or "") + "\nenv/\n")
            try:
                with_env = min(check_s(python, file, workspace) for _ in range(2))
                first = server_run(python, file, workspace, 2)["first_s"]
            finally:
                shutil.rmtree(env)
                if before is None:
                    exclude.unlink()
                else:
                    exclude.write_text(before)
            md.append(f"| {name} | {plain:.2f} | {with_env:.2f} | {with_env / plain:.2f}× | {first:.2f} |")
            print(md[-1], flush=True)
    if args.scaling:
        md += ["", "## Project size", "", "The same edit in a generated project of N modules (p95, ms):", ""]
        md += ["| build | " + " | ".join(str(n) for n in args.scaling) + " |", "|---|" + "---|" * len(args.scaling)]
        series: dict[str, list[tuple[int, float]]] = {}
        for name, python in zip(names, args.python):
            for n in args.scaling:
                with tempfile.TemporaryDirectory() as d:
                    script = scaling_project(Path(d), n)
                    series.setdefault(name, []).append((n, server_run(python, script, Path(d), args.edits)["p95_ms"]))
            md.append(f"| {name} | " + " | ".join(f"{y:.0f}" for _, y in series[name]) + " |")
            print(md[-1], flush=True)
        svg_plot(args.out / "edit_scaling.svg", series)
        md += ["", "![edit p95 against project size](edit_scaling.svg)"]
    if args.typing:  # the first build only: its rows compare selections and the bare parse, not builds
        md += [""] + typing_latency.measure(args.python[0], args.typing, workspace_of, args.runs, args.select)
    header = ["# Editor speed in real workspaces", ""]
    header += [f"Machine: {os.cpu_count()} cores (shared), Python {sys.version.split()[0]}. Each section is written"]
    header += ["by the run that measured it; a run keeps the sections it did not measure."]
    write_sections(args.out / "WORKSPACE.md", header, md)
    return 0


def write_sections(path: Path, header: list[str], lines: list[str]) -> None:
    """`path` with the `## ` sections in `lines` replaced (or added) and its other sections kept."""

    def sections(text: list[str]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        current = None
        for line in text:
            if line.startswith("## "):
                current = found.setdefault(line, [])
            if current is not None:
                current.append(line)
        return found

    kept = sections(path.read_text().splitlines()) if path.exists() else {}
    kept.update(sections(lines))
    body = _squeeze([line for part in kept.values() for line in [*part, ""]])
    path.write_text("\n".join([*header, "", *body]).rstrip("\n") + "\n")


def _squeeze(lines: list[str]) -> list[str]:
    """No two blank lines in a row."""
    return [line for i, line in enumerate(lines) if line or (i and lines[i - 1])]


if __name__ == "__main__":
    sys.exit(main())
