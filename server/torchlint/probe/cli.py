"""`torchlint probe [options] SCRIPT.py [options] [--] [script args...]`: run a script under the probe."""

from __future__ import annotations

import argparse
import difflib
import os
import signal
import sys
from collections.abc import Callable
from typing import TypeVar

from torchlint.notebook import NotebookError
from torchlint.probe import launch, merge, notebooks, render
from torchlint.probe.json_types import ChildResult, Report, ReportRanks
from torchlint.probe.simulated_gpus import DEFAULT_GPU, GPUS

_Number = TypeVar("_Number", int, float)
EXIT_CLEAN, EXIT_OBSERVED, EXIT_ERROR, EXIT_CRASHED, EXIT_UNSUPPORTED = 0, 1, 2, 3, 4


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="torchlint probe",
        allow_abbrev=False,  # `--max-step 5` is a typo to name, not an abbreviation that eats the script
        description="Run a training script for a few steps under instrumentation and confirm static findings. "
        "This executes the script: run it only on code you trust.",
    )
    p.add_argument("script", help="the Python script to run")
    p.add_argument(
        "script_args",
        nargs="*",
        metavar="ARG",
        help="arguments for the script: everything after `--`, or after the script from the first "
        "argument that is not a probe option (like `python SCRIPT args`)",
    )
    p.add_argument("--max-steps", type=_positive(int), default=20, help="stop after N optimizer steps (default 20)")
    p.add_argument(
        "--max-seconds",
        type=_positive(float),
        default=60.0,
        help="stop after S seconds of running the script (default 60)",
    )
    p.add_argument(
        "--kill-after",
        type=_positive(float),
        default=30.0,
        help="kill the script's whole process tree this many seconds after --max-seconds (default 30)",
    )
    p.add_argument(
        "--simulate-cuda",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="pretend one CUDA device exists (default: only when none is available)",
    )
    p.add_argument(
        "--simulated-gpu",
        choices=sorted(GPUS),
        default=DEFAULT_GPU,
        help="the GPU that simulated CUDA reports: name, memory, capability (default h100, 80 GB)",
    )
    p.add_argument(
        "--nproc-per-node",
        type=_positive(int),
        default=1,
        metavar="N",
        help="run N ranks under PyTorch's launcher (torch.distributed.run; gloo, simulated CUDA per rank) "
        "and merge them into one report",
    )
    p.add_argument(
        "--every-step",
        action="store_true",
        help="watch every optimizer step in full (default: the first 8 steps, then 2 in every 50, "
        "which keeps the overhead small; under simulated CUDA device tags still follow every op between them)",
    )
    p.add_argument("--python", default=sys.executable, help="interpreter to run the script with (needs torch)")
    p.add_argument("--output-format", choices=["text", "json"], default="text")
    return p


def _positive(kind: Callable[[str], _Number]) -> Callable[[str], _Number]:
    def parse(value: str) -> _Number:
        try:
            number = kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
        if number <= 0:
            raise argparse.ArgumentTypeError(f"must be positive: {value!r}")
        return number

    return parse


def split_command_line(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[list[str], list[str]]:
    """(probe options and the script, the script's arguments).

    Probe options may come before and after the script; the script's own arguments start
    at `--` or at the first argument after the script that is not a probe option.
    """
    takes_value = {option: action.nargs != 0 for action in parser._actions for option in action.option_strings}
    ours: list[str] = []
    script_seen = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return ours, argv[i + 1 :]
        name = arg.split("=", 1)[0]
        if name in takes_value:
            value = takes_value[name] and "=" not in arg and i + 1 < len(argv)
            ours += argv[i : i + 1 + value]
            i += 1 + value
        elif script_seen or (arg.startswith("-") and arg != "-"):
            if not script_seen:  # before the script, every option is the probe's
                close = difflib.get_close_matches(name, list(takes_value), n=1)
                parser.error(f"unknown option {name}" + (f" (did you mean {close[0]}?)" if close else ""))
            return ours, argv[i:]
        else:
            ours.append(arg)
            script_seen = True
            i += 1
    return ours, []


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    ours, script_args = split_command_line(parser, sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(ours)
    args.script_args = script_args
    script = os.path.realpath(args.script)
    if not os.path.isfile(script):
        print(f"torchlint probe: error: {args.script}: no such file", file=sys.stderr)
        return EXIT_ERROR
    program = None
    if script.endswith(".ipynb"):
        try:
            program = notebooks.program_of(script)
        except NotebookError as exc:
            print(f"torchlint probe: error: {args.script}: {exc}", file=sys.stderr)
            return EXIT_ERROR
        for line in notebooks.skipped(program):
            print(f"torchlint probe: note: IPython line skipped, {line}", file=sys.stderr)
    request = launch.Request(
        script,
        list(args.script_args),
        args.max_steps,
        args.max_seconds,
        args.simulate_cuda,
        python=args.python,
        kill_after=args.kill_after,
        cwd=os.getcwd(),
        gpu=args.simulated_gpu,
        nproc_per_node=args.nproc_per_node,
        every_step=args.every_step,
        source=program.text if program is not None else None,
    )
    # Ctrl-C, or the language server cancelling the run, stops the script's whole process tree. Python
    # leaves SIGINT ignored when it started ignored (a background job of a non-interactive shell, some
    # editors), and then a cancelled run went on to --max-seconds: take it back explicitly.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # In JSON mode stdout carries only the report; the script's output goes to stderr.
    try:
        outcome = launch.run(request, stdout=sys.stderr.fileno() if args.output_format == "json" else None)
    except KeyboardInterrupt:  # the script's process tree is already gone (launch kills it on the way out)
        return 130
    result = outcome.result
    if result is None and outcome.killed:
        print(
            f"torchlint probe: error: {args.python} did not get to start the script (import torch) within "
            f"{launch.STARTUP_SECONDS:.0f} s; it was killed",
            file=sys.stderr,
        )
        return EXIT_ERROR
    if result is None:
        print(
            f"torchlint probe: error: the script's process ended without a report (exit status {outcome.returncode})",
            file=sys.stderr,
        )
        return EXIT_ERROR
    if result.get("error"):
        print(
            f"torchlint probe: error: {result['error']}; the probe needs only torch there: "
            f"`{args.python} -m pip install torch`",
            file=sys.stderr,
        )
        return EXIT_ERROR
    if outcome.killed:
        result["stopped_by"] = "max-seconds"
    elif result.get("partial") and not result.get("exception"):
        # the child died between checkpoints (a signal, a crash in C); a rank's reported crash stays the
        # cause when the launcher then stopped the other ranks (their reports are partial)
        result["stopped_by"] = "exception"
        result["exception"] = {
            "type": "ProcessDied",
            "message": _death(outcome.returncode),
            "path": None,
            "line": None,
        }
    report = build_report(script, result, program.text if program is not None else None)
    if program is not None:
        notebooks.to_cells(program, script, report)
    sys.stdout.write(render.to_json(report) if args.output_format == "json" else render.to_text(report))
    return exit_status(report)


def exit_status(report: Report) -> int:
    """4 simulation did not support the script, 3 it crashed, else its own non-zero exit status, else 1
    when something was observed and 0 when not."""
    exc = report["exception"]
    if exc is not None:
        return EXIT_UNSUPPORTED if exc.get("unsupported") else EXIT_CRASHED
    if report.get("exit_status"):
        return report["exit_status"]
    return EXIT_OBSERVED if report["observations"] else EXIT_CLEAN


def _death(returncode: int | None) -> str:
    if returncode is not None and returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


def build_report(script: str, result: ChildResult, text: str | None = None) -> Report:
    """The child's result plus the static findings of the script (or of `text`, the program it ran), each
    with its runtime status."""
    from torchlint.engine import lint_text
    from torchlint.registry import rules

    catalogue = rules()
    if text is None:
        with open(script, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    wanted = [cls for code, cls in catalogue.items() if code in merge.OBSERVABLE]
    findings = lint_text(script, text, wanted).findings
    ranks: ReportRanks = {"ranks": result["ranks"]} if "ranks" in result else {}
    return {
        "script": script,
        "steps": result["steps"],
        "watched_steps": result.get("watched_steps", result["steps"]),
        "step_kind": result.get("step_kind", "optimizer"),
        "seconds": result["seconds"],
        "stopped_by": result["stopped_by"],
        "simulated_cuda": result["simulated_cuda"],
        "devices_used": result.get("devices_used", []),
        **ranks,
        "exception": result["exception"],
        "exit_status": result.get("exit_status", 0),
        "devices_checked": result.get("devices_checked", True),
        "observations": result["observations"],
        "findings": merge.merge(
            script,
            findings,
            result["observations"],
            set(result["executed_lines"]),
            set(catalogue),
            result.get("devices_checked", True),
        ),
    }
