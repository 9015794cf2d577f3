"""One report from the per-rank results of a script run under `torch.distributed.run`.

Each rank's child writes its own result; an observation seen by several ranks is kept
once (the lowest rank's wording) and says which ranks saw it.
"""

from __future__ import annotations

from torchlint.probe.json_types import ChildResult, ExceptionJson, RankedObservation

_STOP_ORDER = ("exception", "max-seconds", "max-steps", "end")  # the most telling reason wins


def merge(per_rank: dict[int, ChildResult]) -> ChildResult:
    ordered = [per_rank[rank] for rank in sorted(per_rank)]
    first = ordered[0]
    merged: ChildResult = {
        **first,
        "ranks": sorted(per_rank),
        "steps": max(r["steps"] for r in ordered),
        "watched_steps": max(r.get("watched_steps", r["steps"]) for r in ordered),
        "seconds": max(r["seconds"] for r in ordered),
        "stopped_by": min((r["stopped_by"] for r in ordered), key=_STOP_ORDER.index),
        "simulated_cuda": any(r["simulated_cuda"] for r in ordered),
        "exception": _first_crash(per_rank),
        "executed_lines": sorted({line for r in ordered for line in r["executed_lines"]}),
        "devices_used": sorted({d for r in ordered for d in r.get("devices_used", [])}),
        "error": next((r["error"] for r in ordered if r.get("error")), None),
        "partial": any(r.get("partial") for r in ordered),
        "exit_status": next((r["exit_status"] for r in ordered if r.get("exit_status")), 0),
        "devices_checked": all(r.get("devices_checked", True) for r in ordered),
    }
    observations: dict[tuple[str, str, int], RankedObservation] = {}
    for rank, result in sorted(per_rank.items()):
        for obs in result["observations"]:
            key = (obs["kind"], obs["path"], obs["line"])
            seen = observations.get(key)
            if seen is None:
                observations[key] = {**obs, "ranks": [rank]}
            else:
                seen["ranks"].append(rank)
                seen["count"] = max(seen["count"], obs["count"])
                seen["first_step"] = min(seen["first_step"], obs["first_step"])
    merged["observations"] = list(observations.values())
    return merged


def _first_crash(per_rank: dict[int, ChildResult]) -> ExceptionJson | None:
    """The exception of the lowest rank that raised, saying which rank that was."""
    for rank, result in sorted(per_rank.items()):
        if exception := result.get("exception"):
            return {**exception, "rank": rank}
    return None
