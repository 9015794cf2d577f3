"""The probe report: one JSON object for tools, or lines for people."""

from __future__ import annotations

import json
import os

STATUS_WORDS = {"confirmed": "confirmed", "not-observed": "not observed", "not-reached": "not reached"}


def to_json(report: dict) -> str:
    return json.dumps(report, indent=2) + "\n"


def _where(path: str, line: int | None) -> str:
    rel = os.path.relpath(path) if path else "?"
    return f"{rel}:{line}" if line else rel


def to_text(report: dict) -> str:
    out = []
    sim = " (simulated CUDA)" if report["simulated_cuda"] else ""
    stop = {
        "end": "the script ended",
        "max-steps": "--max-steps reached",
        "max-seconds": "--max-seconds reached",
        "exception": "the script raised",
    }[report["stopped_by"]]
    counted = "optimizer steps" if report.get("step_kind", "optimizer") == "optimizer" else "steps (backward calls)"
    out.append(f"probe: {report['steps']} {counted} in {report['seconds']:.1f}s{sim}; {stop}")
    exc = report["exception"]
    if exc and not any(o["kind"] == "crash" for o in report["observations"]):  # else the crash says it
        out.append(f"{_where(exc['path'], exc['line'])}: {exc['type']}: {exc['message']}")
    for o in report["observations"]:
        steps = f"{o['count']} step{'s' if o['count'] != 1 else ''} from step {o['first_step']}"
        library = f" [via {o['facts']['via']}]" if o["facts"].get("via") else ""
        callers = ", ".join(_where(frame["path"], frame["line"]) for frame in o.get("stack", [])[1:])
        called = f" via {callers}" if callers else ""
        out.append(f"{_where(o['path'], o['line'])}: {o['kind']}: {o['message']} ({steps}){called}{library}")
    if report["simulated_cuda"] and not any(d.startswith("cuda") for d in report.get("devices_used", [])):
        out.append("warning: the script never put a tensor on the simulated CUDA device: device checks did not apply")
    if not report["observations"]:
        out.append("no runtime problems observed")
    if report["findings"]:
        out.append("static findings:")
        for f in report["findings"]:
            out.append(f"  {_where(f['path'], f['line'])}: {f['code']} {STATUS_WORDS[f['status']]}: {f['message']}")
    return "\n".join(out) + "\n"
