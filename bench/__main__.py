"""python -m bench [--full] [--corpus DIR ...] [--repeat N] [--no-lsp] [--no-probe] [--out bench/]

Measures, in one run on the same files: a bare libcst parse (the baseline),
torchlint single-process, torchlint with -j (all cores), torchlint re-run on a
warm cache, TorchFix and Ruff when installed; the language server's
didChange -> diagnostics latency, start-up and RSS; the runtime probe's per-step
overhead when torch is installed (bench/probe_overhead.py); then writes RESULTS.md and
a plot of time against corpus size. Installs nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import shutil
import sys
import tempfile
from pathlib import Path

from bench import corpus, lsp_latency, probe_overhead
from bench.measure import median_of

HERE = Path(__file__).resolve().parent


def tool(name: str) -> str | None:
    found = shutil.which(name, path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    return found


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", nargs="*", type=Path, help="directories to lint (default: torch/nn + torch/optim)")
    p.add_argument("--full", action="store_true", help="default corpus: all installed PyTorch libraries")
    p.add_argument("--repeat", type=int, default=3, help="runs per measurement; the median is reported")
    p.add_argument("--no-lsp", action="store_true", help="skip the language-server measurements")
    p.add_argument("--no-probe", action="store_true", help="skip the runtime probe's overhead (needs torch)")
    p.add_argument("--out", type=Path, default=HERE, help="where RESULTS.md and the plot go")
    args = p.parse_args(argv)

    roots = args.corpus or corpus.default_roots(args.full)
    files = corpus.python_files(roots)
    if not files:
        print("bench: no Python files in the corpus", file=sys.stderr)
        return 2
    py = sys.executable
    # Measure torchlint as pip installs it, with compiled bytecode: a PYTHONDONTWRITEBYTECODE left in the
    # environment would recompile every torchlint module in every measured process (~0.5 s of start-up).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    precompile(py)
    torchlint = [py, "-m", "torchlint", "check", "-q", "--exit-zero"]
    work = Path(tempfile.mkdtemp(prefix="torchlint-bench-"))
    listing = work / "files.txt"
    listing.write_text("\n".join(map(str, files)))
    env = {**os.environ, "TORCHLINT_CACHE_DIR": str(work / "cache")}
    cores = os.cpu_count() or 1

    rows = []
    notes: list[str] = []  # measurements that could not be made, said in RESULTS.md

    def row(name, cmd, **kw):
        s = median_of(cmd, args.repeat, env=env, **kw)
        shown = [c for c in cmd if len(c) < 60 or not c.endswith(".py")][:12]  # drop the file list
        rows.append((name, s, " ".join(shown) + (" FILES…" if len(shown) < len(cmd) else "")))
        print(f"{name:<34} wall {s.wall:7.2f}s  cpu {s.cpu:7.2f}s  rss {s.rss_mb:6.0f} MB", flush=True)
        return s

    def drop_cache():
        shutil.rmtree(work / "cache", ignore_errors=True)

    paths = list(map(str, files))
    base = row("libcst parse (baseline)", [py, str(HERE / "parse_only.py"), str(listing)])
    row("torchlint -j 1, cold", [*torchlint, "--no-cache", "-j", "1", *paths])
    row(f"torchlint -j {cores}, cold", [*torchlint, "--no-cache", "-j", str(cores), *paths])
    row("torchlint -j 1, cold (writing cache)", [*torchlint, "-j", "1", *paths], before=drop_cache)
    row("torchlint -j 1, warm cache", [*torchlint, "-j", "1", *paths])
    torchfix = tool("torchfix")
    if torchfix is None:
        notes.append("TorchFix is not installed (not on PATH nor beside this Python): not measured.")
    else:
        try:
            row("TorchFix", [torchfix, "--select", "ALL", *paths])
        except RuntimeError as exc:  # a broken TorchFix install must not cost the other measurements
            notes.append(f"TorchFix failed, not measured: {str(exc).splitlines()[0]}")
    for note in notes:
        print(note, flush=True)
    if tool("ruff"):
        row(
            "Ruff (--select ALL)", [tool("ruff"), "check", "--select", "ALL", "--no-cache", "--exit-zero", "-q", *paths]
        )

    # time against corpus size (single process, cold)
    sizes = []
    for frac in (0.25, 0.5, 1.0):
        subset = files[: max(1, int(len(files) * frac))]
        sub_list = work / f"files-{frac}.txt"
        sub_list.write_text("\n".join(map(str, subset)))
        b = median_of([py, str(HERE / "parse_only.py"), str(sub_list)], 1, env=env)
        t = median_of([*torchlint, "--no-cache", "-j", "1", *map(str, subset)], 1, env=env)
        sizes.append((corpus.line_count(subset), b.cpu, t.cpu))

    lsp = []
    if not args.no_lsp:
        for n in (300, 3000):
            r = lsp_latency.measure([py, "-m", "torchlint", "server"], n, 100, work)
            lsp.append(r)
            print(
                f"LSP {r['lines']} lines: median {r['median_ms']:.1f} ms  p95 {r['p95_ms']:.1f} ms  "
                f"start-up {r['startup_s']:.2f} s  RSS {r['rss_mb']:.0f} MB",
                flush=True,
            )

    probe: list[str] = []
    if not args.no_probe:
        if importlib.util.find_spec("torch") is None:
            notes.append("torch is not installed: the runtime probe's overhead was not measured")
        else:
            probe = probe_overhead.markdown(
                probe_overhead.measure_all(py, list(probe_overhead.STEPS), args.repeat), args.repeat
            )
            print("\n".join(probe), flush=True)

    write_results(args.out, roots, files, base, rows, sizes, lsp, cores, args.repeat, notes, probe)
    shutil.rmtree(work, ignore_errors=True)
    return 0


def precompile(py: str) -> None:
    """Write torchlint's bytecode before measuring, as an install does (no run pays the compile)."""
    import subprocess

    import torchlint
    import torchlint.rules

    dirs = sorted({str(Path(torchlint.__file__).parent), str(Path(torchlint.rules.__file__).parent)})
    subprocess.run([py, "-m", "compileall", "-q", *dirs], check=False, stdout=subprocess.DEVNULL)


def write_results(out: Path, roots, files, base, rows, sizes, lsp, cores, repeat, notes=(), probe=()) -> None:
    lines = corpus.line_count(files)
    md = [
        "# Benchmark results",
        "",
        "Generated by `python -m bench` — do not edit by hand; re-run it.",
        "",
        f"- Machine: {platform.machine()}, {cores} cores, Python {platform.python_version()}, {platform.system()}",
        f"- Corpus: {len(files)} files, {lines:,} lines from {', '.join(str(r) for r in roots)}",
        f"- Each figure is the median of {repeat} runs; CPU is user+system time of the whole process tree.",
        "- torchlint's bytecode is compiled first and PYTHONDONTWRITEBYTECODE is unset, as in an installed copy.",
        "- torchlint runs its default selection (no `--select`); TorchFix and Ruff run every rule they have.",
        *(f"- {note}" for note in notes),
        "",
        "| measurement | wall (s) | CPU (s) | CPU / bare parse | wall / bare parse | peak RSS (MB) |",
        "|---|---|---|---|---|---|",
    ]
    for name, s, _ in rows:
        md.append(
            f"| {name} | {s.wall:.2f} | {s.cpu:.2f} | {s.cpu / base.cpu:.2f}× | {s.wall / base.wall:.2f}× | {s.rss_mb:.0f} |"
        )
    md += _targets(rows, lsp)
    md += ["", "Commands:", ""]
    md += [f"- {name}: `{cmd}`" for name, _, cmd in rows]
    if lsp:
        md += [
            "",
            "## Language server",
            "",
            "didChange → publishDiagnostics over 100 edits (a comment line changed in the middle of the file), "
            "each after a 0.2 s pause: the server lints the first edit after a pause at once and coalesces bursts. "
            "Default selection, generated scripts. This is the best case (a comment edit); keystrokes typed inside "
            "the training loop of real files and notebooks, per selection, are in WORKSPACE.md "
            "(`python -m bench.workspace --typing`).",
            "",
            "| script | median (ms) | p95 (ms) | start-up (s) | RSS after (MB) |",
            "|---|---|---|---|---|",
        ]
        md += [
            f"| {r['lines']} lines | {r['median_ms']:.1f} | {r['p95_ms']:.1f} | {r['startup_s']:.2f} | {r['rss_mb']:.0f} |"
            for r in lsp
        ]
    if probe:
        md += ["", *probe]
    md += [
        "",
        "## Time against corpus size",
        "",
        "| lines | bare parse CPU (s) | torchlint CPU (s) | ratio |",
        "|---|---|---|---|",
    ]
    md += [f"| {n:,} | {b:.2f} | {t:.2f} | {t / b:.2f}× |" for n, b, t in sizes]
    if _plot(out / "scaling.png", sizes):
        md += ["", "![time against corpus size](scaling.png)"]
    else:
        md += ["", "(matplotlib is not installed: no plot)"]
    (out / "RESULTS.md").write_text("\n".join(md) + "\n")
    print(f"wrote {out / 'RESULTS.md'}")


def _targets(rows, lsp) -> list[str]:
    """The performance issue's targets, each as the ratio it is defined by."""

    def get(prefix):
        return next((s for name, s, _ in rows if name.startswith(prefix)), None)

    base, cold = get("libcst parse"), get("torchlint -j 1, cold")
    par, warm, tfix = get("torchlint -j 2") or get("torchlint -j"), get("torchlint -j 1, warm"), get("TorchFix")
    out = ["", "## Targets", "", "| target | measured | met |", "|---|---|---|"]

    def line(what, value, ok):
        out.append(f"| {what} | {value} | {'yes' if ok else 'no'} |")

    line("single process, cold ≤ 1.5× bare parse (CPU)", f"{cold.cpu / base.cpu:.2f}×", cold.cpu / base.cpu <= 1.5)
    if tfix:
        line("≥ 5× faster than TorchFix (CPU)", f"{tfix.cpu / cold.cpu:.1f}×", tfix.cpu / cold.cpu >= 5)
    line("warm cache ≤ 0.1× the cold run (wall)", f"{warm.wall / cold.wall:.2f}×", warm.wall / cold.wall <= 0.1)
    if par and par is not cold:
        line(
            "-j on all cores ≥ 1.7× single-process throughput (wall)",
            f"{cold.wall / par.wall:.2f}×",
            cold.wall / par.wall >= 1.7,
        )
    for r in lsp:
        limit = 100 if r["lines"] < 1000 else 400
        line(f"server p95 ≤ {limit} ms on {r['lines']} lines", f"{r['p95_ms']:.0f} ms", r["p95_ms"] <= limit)
    if lsp:
        line(
            "server start-up ≤ 0.5 s",
            f"{max(r['startup_s'] for r in lsp):.2f} s",
            max(r["startup_s"] for r in lsp) <= 0.5,
        )
        big = max(lsp, key=lambda r: r["lines"])
        line(f"server RSS ≤ 120 MB after {big['lines']} lines", f"{big['rss_mb']:.0f} MB", big["rss_mb"] <= 120)
    return out


def _plot(path: Path, sizes) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot([s[0] for s in sizes], [s[1] for s in sizes], "o-", label="libcst parse")
    ax.plot([s[0] for s in sizes], [s[2] for s in sizes], "s-", label="torchlint check (all rules)")
    ax.set_xlabel("lines of Python")
    ax.set_ylabel("CPU seconds")
    ax.set_title("torchlint vs a bare libcst parse")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return True


if __name__ == "__main__":
    sys.exit(main())
