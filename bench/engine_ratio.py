"""python -m bench.engine_ratio [--repeat N] [--python PY ...] [--corpus DIR ...] [--out bench/]

The engine's speed against a bare libcst parse (issue 25): a cold `torchlint check --select ALL -j 1
--no-cache` over torch's own `optim/` and `utils/data/` sources (every rule, one process, no cache), as a
ratio of `bench/parse_only.py` over the same files. Both are whole processes, interpreter start included;
the figure is CPU time (user + system) of the process. The commands run in turn (the parse, then each
torchlint build given), after a warm-up run each, `--repeat` rounds: each round gives each build a ratio
to the parse of that round, so a machine whose speed drifts compares like with like. The median ratio is
the figure; the lowest and highest ratios are its spread. Writes ENGINE.md. Installs nothing.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import corpus
from bench.measure import Sample, run_once

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SUBSET = ("optim", "utils/data")  # the corpus issue 25's figures were measured on
TARGET = 1.4  # issue 25: a cold check costs at most 1.4x the bare parse


def default_files() -> list[Path]:
    torch = corpus.package_dir("torch")
    return corpus.python_files([torch / sub for sub in SUBSET]) if torch else []


def precompile(py: str) -> None:
    """Write the build's bytecode first, as an install does: no measured run pays the compile."""
    code = (
        "import compileall, pathlib, torchlint, torchlint.rules;"
        "[compileall.compile_dir(str(pathlib.Path(m.__file__).parent), quiet=1) for m in (torchlint, torchlint.rules)]"
    )
    subprocess.run([py, "-c", code], check=False, stdout=subprocess.DEVNULL, env=_env())


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # measure compiled bytecode, as installed
    return env


def measure(pythons: list[str], files: list[Path], repeat: int) -> tuple[list[Sample], dict[str, list[Sample]]]:
    """(the parse's samples, each build's samples), `repeat` rounds in turn after a warm-up round."""
    with tempfile.TemporaryDirectory(prefix="torchlint-engine-ratio-") as work:
        listing = Path(work) / "files.txt"
        listing.write_text("\n".join(map(str, files)))
        paths = list(map(str, files))
        parse = [sys.executable, str(HERE / "parse_only.py"), str(listing)]
        checks = {
            py: [
                py,
                "-m",
                "torchlint",
                "check",
                "--no-cache",
                "--select",
                "ALL",
                "-q",
                "--exit-zero",
                "-j",
                "1",
                *paths,
            ]
            for py in pythons
        }
        env = _env()
        base: list[Sample] = []
        builds: dict[str, list[Sample]] = {py: [] for py in pythons}
        for round_ in range(repeat + 1):
            b = run_once(parse, env=env, cwd=work)
            done = {py: run_once(cmd, env=env, cwd=work) for py, cmd in checks.items()}
            if round_ == 0:
                continue  # the warm-up: file and page caches
            base.append(b)
            for py, s in done.items():
                builds[py].append(s)
            shown = "  ".join(f"{s.cpu / b.cpu:.2f}x" for s in done.values())
            print(f"round {round_}: parse {b.cpu:.2f}s CPU; torchlint/parse {shown}", flush=True)
    return base, builds


def summary(base: list[Sample], samples: list[Sample]) -> dict[str, float]:
    ratios = [s.cpu / b.cpu for s, b in zip(samples, base)]
    return {
        "median": statistics.median(ratios),
        "low": min(ratios),
        "high": max(ratios),
        "cpu": statistics.median(s.cpu for s in samples),
        "parse_cpu": statistics.median(b.cpu for b in base),
        "of_medians": statistics.median(s.cpu for s in samples) / statistics.median(b.cpu for b in base),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.engine_ratio", description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=9, help="measured rounds (after one warm-up round)")
    p.add_argument(
        "--python",
        action="append",
        help="the interpreter of a torchlint build to measure (repeatable: builds compared in the same rounds); "
        "default: this one",
    )
    p.add_argument("--corpus", nargs="*", type=Path, help="directories to check (default: torch's optim/, utils/data/)")
    p.add_argument("--out", type=Path, default=HERE, help="where ENGINE.md goes")
    args = p.parse_args(argv)
    files = corpus.python_files(args.corpus) if args.corpus else default_files()
    if not files:
        print("bench.engine_ratio: no Python files (is torch installed?)", file=sys.stderr)
        return 2
    pythons = args.python or [sys.executable]
    for py in pythons:
        precompile(py)
    load = os.getloadavg()[0]
    base, builds = measure(pythons, files, args.repeat)
    results = {py: summary(base, samples) for py, samples in builds.items()}
    write(args.out / "ENGINE.md", files, args, results, (load, os.getloadavg()[0]))
    return 0


def write(
    out: Path,
    files: list[Path],
    args: argparse.Namespace,
    results: dict[str, dict[str, float]],
    load: tuple[float, float],
) -> None:
    """`load`: the machine's 1-minute load average before and after the rounds (other processes sharing the
    cores make every ratio noisier: the spread says how much)."""
    roots = sorted({str(f.parent) for f in files})
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    md = [
        "# Engine against a bare parse",
        "",
        "Generated by `python -m bench.engine_ratio` — do not edit by hand; re-run it.",
        "",
        f"- Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}; "
        f"measured {when}, load average {load[0]:.1f} before and {load[1]:.1f} after the rounds",
        f"- Corpus: {len(files)} files, {corpus.line_count(files):,} lines ({len(roots)} folders under "
        f"{os.path.commonpath(roots) if roots else '-'})",
        "- Baseline: `bench/parse_only.py` (libcst.parse_module of every file, one process).",
        "- Measured: `torchlint check --no-cache --select ALL -q --exit-zero -j 1 FILES`: every rule, one process, "
        "no cache.",
        f"- {args.repeat} rounds after a warm-up round; in each, the parse and then every build run in turn, and "
        "each build's CPU time (user + system, whole process) is divided by the parse's of that round. "
        "The ratio is the median of the rounds; low and high are the extreme rounds.",
        "",
        f"| build | CPU / bare parse (median) | low | high | torchlint CPU (s) | parse CPU (s) | target ≤ {TARGET}× |",
        "|---|---|---|---|---|---|---|",
    ]
    for py, r in results.items():
        met = "met" if r["median"] <= TARGET else "not met"
        md.append(
            f"| `{py}` | {r['median']:.2f}× | {r['low']:.2f}× | {r['high']:.2f}× | {r['cpu']:.2f} | "
            f"{r['parse_cpu']:.2f} | {met} |"
        )
    md += [
        "",
        "A shared machine drifts: a wide low–high range says the rounds were disturbed; compare builds measured "
        "in the same run (`--python A --python B`) rather than figures from different runs.",
    ]
    out.write_text("\n".join(md) + "\n")
    print(f"wrote {out}")
    for py, r in results.items():
        print(f"{py}: {r['median']:.2f}x (low {r['low']:.2f}x, high {r['high']:.2f}x)")


if __name__ == "__main__":
    raise SystemExit(main())
