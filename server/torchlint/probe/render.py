"""The probe report: one JSON object for tools, or lines for people."""

from __future__ import annotations

import json
import os

from torchlint.probe.json_types import ObservationJson, Report

STATUS_WORDS = {
    "confirmed": "confirmed",
    "not-observed": "not observed",
    "not-reached": "not reached",
    "not-applicable": "not applicable on this machine (no GPU, simulation off)",
}


def to_json(report: Report) -> str:
    return json.dumps(report, indent=2) + "\n"


def _where(path: str | None, line: int | None) -> str:
    rel = os.path.relpath(path) if path else "?"
    return f"{rel}:{line}" if line else rel


def _stop(report: Report) -> str:
    exc = report["exception"]
    if exc and exc.get("unsupported"):
        return "simulated CUDA does not support what the script called"
    if exc and exc["type"] == "ProcessDied":
        return f"the script's process died ({exc['message']})"
    if report["stopped_by"] == "end" and report.get("exit_status"):
        return f"the script exited with status {report['exit_status']}"
    return {
        "end": "the script ended",
        "max-steps": "--max-steps reached",
        "max-seconds": "--max-seconds reached",
        "exception": "the script raised",
    }[report["stopped_by"]]


def _steps(report: Report, o: ObservationJson) -> str:
    """Which steps an observation fired in, out of the steps watched (all of them with --every-step)."""
    if o["kind"] == "crash":
        return f"in step {o['first_step']}" if report["steps"] or o["first_step"] > 1 else "before any step"
    watched = max(report.get("watched_steps", report["steps"]), o["count"])
    return f"in {o['count']} of {watched} watched step{'s' if watched != 1 else ''}, from step {o['first_step']}"


def to_text(report: Report) -> str:
    out = []
    sim = " (simulated CUDA)" if report["simulated_cuda"] else ""
    counted = "optimizer steps" if report.get("step_kind", "optimizer") == "optimizer" else "steps (backward calls)"
    exc = report["exception"]
    died = exc is not None and exc["type"] == "ProcessDied"
    ran = f"at least {report['steps']}" if died else str(report["steps"])
    watched = report.get("watched_steps", report["steps"])
    extra = f", {watched} watched in full" if watched < report["steps"] else ""
    out.append(f"probe: {ran} {counted}{extra} in {report['seconds']:.1f}s{sim}; {_stop(report)}")
    if exc and exc.get("unsupported"):
        out.append(
            f"{_where(exc['path'], exc['line'])}: simulation does not support `{exc['unsupported']}`: "
            f"{exc['type']}: {exc['message']} (not a bug of the script: on a GPU this runs; "
            "probe it there or with --no-simulate-cuda)"
        )
    elif exc and not died and not any(o["kind"] == "crash" for o in report["observations"]):  # else it is said
        out.append(f"{_where(exc['path'], exc['line'])}: {exc['type']}: {exc['message']}")
    for o in report["observations"]:
        library = f" [via {o['facts']['via']}]" if o["facts"].get("via") else ""
        callers = ", ".join(_where(frame["path"], frame["line"]) for frame in o.get("stack", [])[1:])
        called = f" via {callers}" if callers else ""
        out.append(
            f"{_where(o['path'], o['line'])}: {o['kind']}: {o['message']} ({_steps(report, o)}){called}{library}"
        )
    if report["simulated_cuda"] and not any(d.startswith("cuda") for d in report.get("devices_used", [])):
        out.append("warning: the script never put a tensor on the simulated CUDA device: device checks did not apply")
    if not report.get("devices_checked", True):
        out.append("warning: no GPU here and simulation is off: device checks did not apply")
    if not report["observations"]:
        if died or (exc and exc.get("unsupported")):
            out.append("nothing observed before the run ended")
        else:
            out.append("no runtime problems observed")
    if report["findings"]:
        out.append("static findings:")
        for f in report["findings"]:
            out.append(f"  {_where(f['path'], f['line'])}: {f['code']} {STATUS_WORDS[f['status']]}: {f['message']}")
    return "\n".join(out) + "\n"
