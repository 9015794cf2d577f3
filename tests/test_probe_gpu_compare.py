"""bench/probe_gpu_compare.py's comparison of a simulated run with a real-GPU run, on made-up runs: the
GPU check itself needs a machine with a GPU (issue 29, item 8)."""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
_spec = importlib.util.spec_from_file_location("probe_gpu_compare", ROOT / "bench" / "probe_gpu_compare.py")
compare_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare_module)


def run(steps, *observations, stopped_by="end", error=""):
    return {"steps": steps, "stopped_by": stopped_by, "error": error, "observations": list(observations)}


def obs(kind, line, shows=None, path="train.py"):
    return {"kind": kind, "path": path, "line": line, "message": "m", "shows": shows}


def test_a_mismatch_observed_in_simulation_is_the_crash_a_gpu_raises_at_that_line():
    sim = run(5, obs("device-mismatch", 13), obs("host-sync", 20))
    gpu = run(5, obs("crash", 13, shows="device-mismatch"), obs("host-sync", 20), stopped_by="exception")
    d = compare_module.compare(sim, gpu)
    assert d["both"] == [("device-mismatch", "train.py", 13), ("host-sync", "train.py", 20)]
    assert d["only_simulated"] == d["only_gpu"] == []
    assert compare_module.differs(d)  # the GPU run ended at the crash: told, not hidden
    assert d["ended"] == ("end", "exception")


def test_what_only_one_side_saw_and_different_steps_are_differences():
    sim = run(8, obs("device-mismatch", 30))
    gpu = run(8, obs("host-sync", 31))
    d = compare_module.compare(sim, gpu)
    assert d["only_simulated"] == [("device-mismatch", "train.py", 30)]
    assert d["only_gpu"] == [("host-sync", "train.py", 31)]
    assert compare_module.differs(d)
    same = compare_module.compare(run(8, obs("host-sync", 31)), run(8, obs("host-sync", 31)))
    assert not compare_module.differs(same)
    assert compare_module.differs(compare_module.compare(run(8), run(7)))
    assert not compare_module.differs(compare_module.compare(run(734), run(242), same_steps=False))  # unseeded
    assert compare_module.differs(compare_module.compare(run(8), run(None, error="ProcessDied")))


def test_the_table_names_each_difference():
    d = compare_module.compare(run(3, obs("graph-retained", 9)), run(3))
    text = compare_module.table([("nanogpt-train", d)])
    assert "| nanogpt-train | 3 / 3 | end / end | 0 | graph-retained train.py:9 | - |" in text
