"""Map runtime observations onto the static findings of the same file.

A finding is `confirmed` when an observation of a kind that can show its problem
happened on one of its lines: the observation's own line, any user frame of its call
stack (a mismatch inside a custom module's `forward` confirms TL301 at `model(x)`), or
a related site in its facts. A `crash` counts as the kind its error shows (facts
`shows`: a device-mismatch error confirms what a device mismatch would). `not-observed` when its lines ran but the problem did not show, and
`not-reached` when none of its lines ran; `not-applicable` for a device finding when no device could be
checked (real-device mode on a machine without a GPU). Only findings of rules that the probe can
observe are returned; the table below is the one place that says which.
"""

from __future__ import annotations

import os

from torchlint.findings import Finding
from torchlint.probe.json_types import FindingJson, ObservationJson

# observation kind -> rule codes whose problem it shows.
KIND_CODES: dict[str, tuple[str, ...]] = {
    "device-mismatch": ("TL301", "TL304", "TL201", "TL302"),
    "module-device-split": ("TL201", "TL302"),
    "non-contiguous-view": ("TL305",),
    "implicit-copy": (),
    "memory-format-mismatch": (),
    "host-sync": (),
    "grads-not-cleared": ("TL101",),
    "grads-zero-at-step": ("TL102",),
    "eval-mode-in-training": ("TL111",),
    "graph-retained": ("TL105",),
    "param-never-updated": ("TL202",),
    "crash": (),  # through facts["shows"]
    "ddp-before-device-move": ("TL401",),
    "process-group-missing": ("TL402",),
    "sampler-epoch-not-set": ("TL403",),
}
OBSERVABLE = frozenset(code for codes in KIND_CODES.values() for code in codes)
# What only a second device can show: without a GPU or simulated CUDA none of it can happen.
DEVICE_KINDS = ("device-mismatch", "module-device-split", "ddp-before-device-move")
DEVICE_CODES = frozenset(code for kind in DEVICE_KINDS for code in KIND_CODES[kind])


def _lines(obs: ObservationJson, path: str) -> set[int]:
    lines = {obs["line"]} if _same(obs["path"], path) else set()
    for site in [*obs.get("stack", ()), *obs.get("facts", {}).get("sites", ())]:
        if _same(site.get("path") or "", path):
            lines.add(site["line"])
    return lines


def _codes(obs: ObservationJson) -> tuple[str, ...]:
    if obs["kind"] == "crash":
        return KIND_CODES.get(obs.get("facts", {}).get("shows") or "", ())
    return KIND_CODES.get(obs["kind"], ())


def _same(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def merge(
    path: str,
    findings: list[Finding],
    observations: list[ObservationJson],
    executed: set[int],
    known: set[str],
    devices_checked: bool = True,
) -> list[FindingJson]:
    """Each observable static finding of `path` as Finding.to_json() plus `status`."""
    by_code: dict[str, set[int]] = {}
    for obs in observations:
        for code in _codes(obs):
            if code in known:
                by_code.setdefault(code, set()).update(_lines(obs, path))
    merged = []
    for f in findings:
        if f.code not in OBSERVABLE:
            continue
        span = set(range(min(f.line, f.statement_line or f.line), max(f.end_line, f.node_end_line, f.line) + 1))
        if span & by_code.get(f.code, set()):
            status = "confirmed"
        elif not devices_checked and f.code in DEVICE_CODES:
            status = "not-applicable"
        elif span & executed:
            status = "not-observed"
        else:
            status = "not-reached"
        merged.append({**f.to_json(), "status": status})
    return merged
