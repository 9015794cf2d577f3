"""The child process: run the user's script under the probe and write a JSON result.

Started by `torchlint.probe.launch` as `python -c ... REQUEST_JSON`; this is the only
place torch is imported. The result is rewritten at step boundaries so that a child
killed at the hard limit still leaves what it saw.
"""

from __future__ import annotations

import json
import linecache
import os
import signal
import sys
import time
import traceback
import types
from typing import TYPE_CHECKING, NoReturn

from torchlint.probe.json_types import ChildRequest, ChildResult, ExceptionJson, Facts

if TYPE_CHECKING:
    from torchlint.probe.instrument import Probe


def _write(path: str, result: ChildResult) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(result, fh)
    os.replace(tmp, path)


def _crash(probe: Probe, exc: BaseException) -> ExceptionJson:
    """The exception at the innermost user frame, recorded as a `crash` observation too; a crash that
    simulated CUDA caused (a CUDA feature it does not stand in for) names that feature instead."""
    from torchlint.probe.crashes import shows, simulation_gap
    from torchlint.probe.not_simulated import NotSimulated
    from torchlint.probe.sites import Site

    message = _summary(str(exc))
    frames = probe.state.attributor.frames(exc.__traceback__)
    path, line = frames[0] if frames else (None, None)
    exception: ExceptionJson = {"type": type(exc).__name__, "message": message, "path": path, "line": line}
    if probe.simulate and (isinstance(exc, NotSimulated) or simulation_gap(str(exc))):
        what = exc.what if isinstance(exc, NotSimulated) else None
        return {**exception, "unsupported": what or probe.state.attributor.called_from_user(exc.__traceback__)}
    if frames:
        facts: Facts = {"type": type(exc).__name__, "message": message}
        kind = shows(str(exc))
        if kind:
            facts["shows"] = kind
        probe.obs.add("crash", Site(*frames[0], None, tuple(frames[1:])), f"{type(exc).__name__}: {message}", facts)
    return exception


def main(argv: list[str]) -> int:
    request: ChildRequest = json.loads(argv[0])  # launch.run wrote it
    script = request["script"]
    out_path = request["result"] + (f".{os.environ.get('RANK', 0)}" if request.get("per_rank") else "")
    started = time.monotonic()
    result: ChildResult = {
        "steps": 0,
        "seconds": 0.0,
        "stopped_by": "end",
        "simulated_cuda": False,
        "exception": None,
        "observations": [],
        "devices_used": [],
        "executed_lines": [],
        "error": None,
    }
    sys.argv = [script, *request["args"]]
    # Like `python script.py`: the script's directory first, not the working directory `-c` put there.
    if sys.path and sys.path[0] == "":
        sys.path[0] = os.path.dirname(script)
    else:
        sys.path.insert(0, os.path.dirname(script))
    try:
        import torch  # noqa: F401 - the probe needs it; the user's script will import it anyway
    except ImportError as exc:
        result["error"] = f"cannot import torch in {sys.executable}: {exc}"
        _write(out_path, result)
        return 3

    from torchlint.probe.instrument import Probe

    text = request.get("source")
    source: str | bytes
    if text is not None:  # a notebook's code cells: tracebacks and spans read its lines
        source = text
        linecache.cache[script] = (len(text), None, text.splitlines(keepends=True), script)
    else:
        with open(script, "rb") as fh:
            source = fh.read()
    probe = Probe(
        script,
        request["max_steps"],
        request["simulate"],
        request["gpu"],
        int(os.environ.get("LOCAL_WORLD_SIZE", 1)),
        every_step=request.get("every_step", False),
    )
    code = probe.coverage.compile(source)
    result["simulated_cuda"] = probe.simulate
    result["devices_checked"] = probe.state.track_devices  # simulated, or a real GPU to check against
    pid = os.getpid()

    def snapshot(stopped_by: str) -> ChildResult:
        """The result so far: what the probe has seen, stopped by `stopped_by` now."""
        seconds = round(time.monotonic() - started, 3)
        return {**result, **probe.result(), "stopped_by": stopped_by, "seconds": seconds}

    last = [0.0]

    def checkpoint() -> None:
        now = time.monotonic()
        if os.getpid() == pid and now - last[0] > 0.5:
            last[0] = now
            _write(out_path, {**snapshot("max-seconds"), "partial": True})

    alarm_fired = [False]

    def on_alarm(signum: int, frame: types.FrameType | None) -> NoReturn:
        from torchlint.probe.training import Stop

        alarm_fired[0] = True
        if os.getpid() == pid:  # if the script outlives the Stop and is killed, this report remains
            _write(out_path, {**snapshot("max-seconds"), "partial": True})
        raise Stop("max-seconds")

    main_module = types.ModuleType("__main__")
    main_module.__dict__.update({"__file__": script, "__builtins__": __builtins__, "__spec__": None})
    sys.modules["__main__"] = main_module
    stopped_by = "end"
    from torchlint.probe.training import Stop

    probe.on_checkpoint = checkpoint
    real_exit = os._exit

    def exit_now(status: int) -> NoReturn:
        """`os._exit` in the script: its report is written first, with the steps it really ran."""
        if os.getpid() == pid:
            _write(out_path, {**snapshot("end"), "exit_status": status})
        real_exit(status)

    os._exit = exit_now
    probe.install(code)
    # The script starts now: this first report tells the launcher to start its hard limit's clock, and
    # stays if the child is killed before a step writes another (a script stuck in one long C call).
    _write(out_path, {**snapshot("max-seconds"), "partial": True})
    if request["max_seconds"]:
        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, request["max_seconds"])
    try:
        with probe.modes():
            exec(code, main_module.__dict__)
    except Stop as stop:
        stopped_by = stop.reason
    except SystemExit as exc:
        stopped_by = "end"
        result["exit_status"] = _exit_status(exc)
    except BaseException as exc:
        if alarm_fired[0]:
            # the Stop raised at an arbitrary point of the script came back as another exception (a
            # library that wraps what a callback raises, a handler that re-raises): the limit stopped it
            stopped_by = "max-seconds"
        else:  # the user's error: report it at the user's line
            stopped_by = "exception"
            result["exception"] = _crash(probe, exc)
            _print_traceback(exc)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        os._exit = real_exit
    if os.getpid() != pid:  # a fork of the user's program finished: it reports nothing
        os._exit(0)
    probe.uninstall()
    _write(out_path, snapshot(stopped_by))
    sys.stdout.flush()
    sys.stderr.flush()
    # The process ends as the script's would: a launcher watching it (torchrun stops every rank when one
    # fails, as it does without the probe) must see a crash as a failure, not wait for the other ranks.
    if stopped_by == "exception" and request.get("per_rank"):
        _await_siblings(request["result"])
    return 1 if stopped_by == "exception" else result.get("exit_status") or 0


SIBLING_SECONDS = 5.0


def _await_siblings(result_path: str) -> None:
    """Ranks often crash at the same line together, and torchrun stops the others as soon as one fails: a
    crashed rank first waits for every rank's final report (at most SIBLING_SECONDS, for a rank that hangs
    waiting on this one), so that the stop cuts no sibling's report short."""
    paths = [f"{result_path}.{rank}" for rank in range(int(os.environ.get("WORLD_SIZE", "1")))]
    deadline = time.monotonic() + SIBLING_SECONDS
    while time.monotonic() < deadline and not all(_final(path) for path in paths):
        time.sleep(0.05)


def _final(path: str) -> bool:
    try:
        with open(path, encoding="utf-8") as fh:
            return not json.load(fh).get("partial")
    except (OSError, ValueError):
        return False


def _summary(text: str) -> str:
    """An exception's message in one line. One that carries another process's traceback (`mp.spawn`'s
    ProcessRaisedException starts with blank lines) adds that traceback's last line: the error itself."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    if len(lines) > 1 and any(line.startswith("Traceback (most recent call last)") for line in lines):
        return f"{lines[0]} {lines[-1]}"
    return lines[0]


def _print_traceback(exc: BaseException) -> None:
    """The script's traceback as `python script.py` prints it: the probe's frames (its boot, this file, the
    modes every torch call passes through) are left out."""
    from torchlint.probe.sites import BOOT_FILE, PROBE_DIR

    def ours(frame: traceback.FrameSummary) -> bool:
        return (
            frame.filename.startswith(PROBE_DIR) or frame.filename == "<string>" or frame.filename.endswith(BOOT_FILE)
        )

    def strip(te: traceback.TracebackException | None, seen: set[int]) -> None:
        if te is None or id(te) in seen:
            return
        seen.add(id(te))
        te.stack = traceback.StackSummary.from_list([f for f in te.stack if not ours(f)])
        for inner in (te.__cause__, te.__context__, *(getattr(te, "exceptions", None) or ())):
            strip(inner, seen)

    te = traceback.TracebackException.from_exception(exc)
    strip(te, set())
    sys.stderr.write("".join(te.format()))


def _exit_status(exc: SystemExit) -> int:
    """The status `sys.exit(code)` gives the process; a message is printed, as Python does."""
    if exc.code is None or isinstance(exc.code, int):
        return exc.code or 0
    print(exc.code, file=sys.stderr)
    return 1


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    os._exit(code)
