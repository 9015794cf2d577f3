"""The child process: run the user's script under the probe and write a JSON result.

Started by `torchlint.probe.launch` as `python -c ... REQUEST_JSON`; this is the only
place torch is imported. The result is rewritten at step boundaries so that a child
killed at the hard limit still leaves what it saw.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import traceback
import types


def _write(path: str, result: dict) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(result, fh)
    os.replace(tmp, path)


def _crash(probe, exc: BaseException) -> dict:
    """The exception at the innermost user frame, recorded as a `crash` observation too."""
    from torchlint.probe.crashes import shows
    from torchlint.probe.sites import Site

    message = str(exc).splitlines()[0] if str(exc) else ""
    frames = probe.state.attributor.frames(exc.__traceback__)
    if frames:
        facts = {"type": type(exc).__name__, "message": message}
        kind = shows(str(exc))
        if kind:
            facts["shows"] = kind
        probe.obs.add("crash", Site(*frames[0], None, tuple(frames[1:])), f"{type(exc).__name__}: {message}", facts)
    where = frames[0] if frames else (None, None)
    return {"type": type(exc).__name__, "message": message, "path": where[0], "line": where[1]}


def main(argv: list[str]) -> int:
    request = json.loads(argv[0])
    script = request["script"]
    out_path = request["result"] + (f".{os.environ.get('RANK', 0)}" if request.get("per_rank") else "")
    started = time.monotonic()
    result = {
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
    pid = os.getpid()

    def snapshot(stopped_by: str) -> dict:
        result.update(probe.result())
        result["stopped_by"] = stopped_by
        result["seconds"] = round(time.monotonic() - started, 3)
        return result

    last = [0.0]

    def checkpoint() -> None:
        now = time.monotonic()
        if os.getpid() == pid and now - last[0] > 0.5:
            last[0] = now
            _write(out_path, {**snapshot("max-seconds"), "partial": True})

    def on_alarm(signum, frame):
        from torchlint.probe.training import Stop

        raise Stop("max-seconds")

    main_module = types.ModuleType("__main__")
    main_module.__dict__.update({"__file__": script, "__builtins__": __builtins__, "__spec__": None})
    sys.modules["__main__"] = main_module
    stopped_by = "end"
    from torchlint.probe.training import Stop

    probe.on_checkpoint = checkpoint
    probe.install(code)
    if request["max_seconds"]:
        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, request["max_seconds"])
    try:
        with probe.modes():
            exec(code, main_module.__dict__)
    except Stop as stop:
        stopped_by = stop.reason
    except SystemExit:
        stopped_by = "end"
    except BaseException as exc:  # the user's error: report it at the user's line
        stopped_by = "exception"
        result["exception"] = _crash(probe, exc)
        traceback.print_exception(exc, file=sys.stderr)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if os.getpid() != pid:  # a fork of the user's program finished: it reports nothing
        os._exit(0)
    probe.uninstall()
    _write(out_path, snapshot(stopped_by))
    sys.stdout.flush()
    sys.stderr.flush()
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    os._exit(code)
