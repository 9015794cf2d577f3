"""`--nproc-per-node 2`: the script under torch.distributed.run (gloo, simulated CUDA per rank), one report."""

import jsonschema
import pytest
from probe_helpers import REPORT, only, reports  # noqa: F401 - the fixture

pytest.importorskip("torch")

DDP_BUGS = [
    # script, observation kind, its line, the static finding it confirms
    ("ddp/ddp_wrap_before_move.py", "ddp-before-device-move", 18, ("TL401", 18)),
    ("ddp/ddp_sampler_epoch.py", "sampler-epoch-not-set", 24, ("TL403", 23)),
    ("ddp/ddp_no_process_group.py", "process-group-missing", 16, ("TL402", 16)),
]


@pytest.mark.parametrize("script,kind,line,finding", DDP_BUGS, ids=[bug[1] for bug in DDP_BUGS])
def test_each_ddp_bug_is_seen_by_both_ranks_and_confirms_its_rule(reports, script, kind, line, finding):
    report, proc = reports(script, "--nproc-per-node", "2")
    assert report is not None, proc.stderr
    jsonschema.validate(report, REPORT)
    assert report["ranks"] == [0, 1]
    assert report["devices_used"] == ["cuda:0", "cuda:1"]  # each rank on its own simulated device
    (obs,) = only(report, kind)
    assert (obs["line"], obs["ranks"]) == (line, [0, 1])
    statuses = {(f["code"], f["line"]): f["status"] for f in report["findings"]}
    assert statuses[finding] == "confirmed"


def test_the_clean_ddp_twin_is_silent_on_both_ranks(reports):
    report, proc = reports("ddp/ddp_clean.py", "--nproc-per-node", "2")
    assert report is not None, proc.stderr
    assert (report["ranks"], report["stopped_by"], report["observations"]) == ([0, 1], "end", [])
    assert report["steps"] == 4 and proc.returncode == 0


def test_ranks_merge_into_one_report():
    from torchlint.probe import ranks

    def result(rank, stopped_by, observations):
        return {
            "steps": 3 + rank,
            "seconds": 1.0,
            "stopped_by": stopped_by,
            "simulated_cuda": True,
            "exception": None,
            "observations": observations,
            "executed_lines": [rank + 1],
            "devices_used": [f"cuda:{rank}"],
            "error": None,
        }

    seen = {"kind": "host-sync", "path": "/x/t.py", "line": 5, "message": "m", "count": 2, "first_step": 2}
    merged = ranks.merge(
        {1: result(1, "max-steps", [{**seen, "count": 4, "first_step": 1}]), 0: result(0, "end", [seen])}
    )
    assert (merged["ranks"], merged["steps"], merged["stopped_by"]) == ([0, 1], 4, "max-steps")
    assert merged["executed_lines"] == [1, 2] and merged["devices_used"] == ["cuda:0", "cuda:1"]
    assert merged["observations"] == [{**seen, "count": 4, "first_step": 1, "ranks": [0, 1]}]


def test_a_rank_that_crashes_stops_the_others_and_is_the_reported_cause(reports):
    # Seen on a one-GPU machine: rank 1's `set_device(1)` raised, the probe's child exited 0, so torchrun
    # waited on rank 0 (blocked in init_process_group) until --max-seconds, and the report said so.
    report, proc = reports("ddp/ddp_rank_crashes.py", "--nproc-per-node", "2", "--no-simulate-cuda")
    assert report is not None, proc.stderr
    assert report["stopped_by"] == "exception"
    assert (report["exception"]["type"], report["exception"]["line"], report["exception"]["rank"]) == (
        "RuntimeError",
        9,
        1,
    )
    assert report["steps"] == 0 and proc.returncode == 3
