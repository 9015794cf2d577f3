"""Each planted bug is confirmed at the right line with the right facts; each clean look-alike is silent."""

import re
from pathlib import Path

import jsonschema
import pytest
from probe_helpers import REPORT, SCRIPTS, only, reports  # noqa: F401 - the fixture

pytest.importorskip("torch")

PLANTED = [
    # script, kind, line, facts that must hold
    (
        "device_input_not_moved.py",
        "device-mismatch",
        13,
        {"devices": ["cpu", "cuda:0", "cuda:0"], "shapes": [[4, 8], [16, 8], [16]]},
    ),
    ("default_device_in_forward.py", "device-mismatch", 12, {"op": "aten.add"}),
    ("tensor_attribute.py", "module-device-split", 21, {"module": "Scaled", "majority": "cuda:0"}),
    ("partial_move.py", "module-device-split", 20, {"module": "Net", "majority": "cuda:0"}),
    ("view_non_contiguous.py", "non-contiguous-view", 5, {"shapes": [[6, 4]], "strides": [[1, 6]]}),
    ("layout.py", "implicit-copy", 7, {"op": "reshape", "bytes": 32 * 64 * 16 * 4, "strides": [[1024, 1, 16]]}),
    ("layout.py", "memory-format-mismatch", 10, {"formats": ["channels_last", "contiguous"]}),
    ("host_sync.py", "host-sync", 13, {"op": "item", "devices": ["cuda:0"]}),
    ("host_sync.py", "host-sync", 14, {"op": "__bool__"}),
    ("host_sync.py", "host-sync", 16, {"op": "__getitem__"}),
    ("missing_zero_grad.py", "grads-not-cleared", 10, {"parameters": 2, "steps": [2, 3, 4, 5, 6]}),
    ("clip_no_zero_grad.py", "grads-not-cleared", 10, {"parameters": 2, "steps": [2, 3, 4]}),
    ("zero_grad_before_step.py", "grads-zero-at-step", 9, {"optimizer": "SGD"}),
    ("eval_mode.py", "eval-mode-in-training", 11, {"module": "Sequential", "optimizer": "SGD"}),
    ("graph_retained.py", "graph-retained", 13, {}),
    ("plain_container.py", "param-never-updated", 8, {"reason": "no-optimizer"}),
]


def test_the_report_schema_names_every_kind_the_probe_makes_and_the_docs_list():
    """The schema the tests validate against is the documented one: a new kind must reach both."""
    from probe_helpers import OBSERVATION

    from torchlint.probe.observations import KINDS

    docs = (Path(__file__).parents[2] / "docs" / "probe.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([a-z-]+)` \|", docs, flags=re.M))
    assert set(OBSERVATION["properties"]["kind"]["enum"]) == set(KINDS) == documented


def test_the_typed_json_shapes_are_the_schema_reports_are_validated_against():
    """json_types (what mypy --strict holds the probe's code to) and the schema every probed report is
    checked against name the same keys, and a key the schema requires is required in the type too."""
    from probe_helpers import OBSERVATION, REPORT

    from torchlint.probe.json_types import ExceptionJson, RankedObservation, Report, SiteJson

    def keys(shape: type) -> set[str]:
        return set(shape.__required_keys__ | shape.__optional_keys__)

    assert keys(RankedObservation) == set(OBSERVATION["properties"])
    assert RankedObservation.__required_keys__ == set(OBSERVATION["required"])
    stack = OBSERVATION["properties"]["stack"]["items"]
    assert keys(SiteJson) == set(stack["properties"]) and SiteJson.__required_keys__ == set(stack["required"])
    assert keys(Report) == set(REPORT["properties"])
    assert set(REPORT["required"]) <= Report.__required_keys__
    exception = REPORT["properties"]["exception"]["oneOf"][1]
    assert keys(ExceptionJson) == set(exception["properties"])
    assert ExceptionJson.__required_keys__ == set(exception["required"])


@pytest.mark.parametrize("script,kind,line,facts", PLANTED, ids=[f"{p[0]}-{p[1]}" for p in PLANTED])
def test_planted_bug_is_observed_at_its_line(reports, script, kind, line, facts):
    report, proc = reports(script)
    assert report is not None, proc.stderr
    assert report["stopped_by"] in ("end", "exception"), proc.stderr
    jsonschema.validate(report, REPORT)
    hits = [o for o in only(report, kind) if o["line"] == line]
    assert hits, f"no {kind} at line {line}: {report['observations']}"
    assert hits[0]["path"] == str(SCRIPTS / script)
    for key, value in facts.items():
        assert hits[0]["facts"][key] == value


def test_device_mismatch_message_names_each_side(reports):
    report, _ = reports("device_input_not_moved.py")
    (obs,) = only(report, "device-mismatch")
    assert obs["message"].startswith("input on cpu, weight, bias on cuda:0")
    assert obs["count"] == 5 and obs["first_step"] == 1
    # the batch's origin line is a related site, so a static finding there is confirmed too
    assert {"path": str(SCRIPTS / "device_input_not_moved.py"), "line": 10} in obs["facts"]["sites"]


def test_module_split_names_the_stray_tensor_and_where_it_was_made(reports):
    report, _ = reports("tensor_attribute.py")
    (split,) = only(report, "module-device-split")
    assert split["facts"]["tensors"] == [{"name": "scale", "what": "attribute", "device": "cpu"}]
    assert {"path": str(SCRIPTS / "tensor_attribute.py"), "line": 9} in split["facts"]["sites"]


def test_partial_move_points_at_the_move(reports):
    report, _ = reports("partial_move.py")
    (split,) = only(report, "module-device-split")
    assert {t["name"] for t in split["facts"]["tensors"]} == {"head.weight", "head.bias"}
    assert {"path": str(SCRIPTS / "partial_move.py"), "line": 16} in split["facts"]["sites"]
    # the optimizer's step meets the same split; it must not be reported again as a mismatch there
    assert not [o for o in only(report, "device-mismatch") if o["line"] == 21]


def test_graph_retained_counts_growing_nodes(reports):
    report, _ = reports("graph_retained.py")
    (obs,) = only(report, "graph-retained")
    nodes = obs["facts"]["graph_nodes"]
    assert nodes == sorted(nodes) and nodes[-1] > nodes[0]
    assert not [o for o in report["observations"] if o["line"] == 14]  # running += loss.item() is fine


def test_host_sync_ignores_cpu_tensors_and_one_off_syncs(reports):
    report, _ = reports("host_sync.py")
    lines = {o["line"] for o in only(report, "host-sync")}
    assert 17 not in lines  # .item() of a CPU tensor
    assert 18 not in lines  # print after the loop: fired in one step only
    assert 25 not in lines  # a print every 4th step
    assert all(o["count"] == 4 for o in only(report, "host-sync"))


def test_implicit_copy_ignores_contiguous_reshape_and_matching_formats(reports):
    report, _ = reports("layout.py")
    assert [o["line"] for o in only(report, "implicit-copy")] == [7]  # line 13: a copy too small to matter
    assert [o["line"] for o in only(report, "memory-format-mismatch")] == [10]


@pytest.mark.parametrize(
    "script",
    [
        "device_clean.py",
        "buffer_clean.py",
        "grad_accumulation_clean.py",
        "eval_mode_clean.py",
        "zero_grad_in_place_clean.py",
        "gan_and_frozen_clean.py",
        "alternate_head_clean.py",
        "grad_scaler.py",
    ],
)
def test_clean_look_alike_is_silent(reports, script):
    report, proc = reports(script)
    assert report is not None, proc.stderr
    assert report["stopped_by"] == "end"
    assert report["steps"] > 0
    assert report["observations"] == []
    assert proc.returncode == 0


def test_zero_grad_before_step_is_not_also_an_accumulation(reports):
    report, _ = reports("zero_grad_before_step.py")
    assert [o["kind"] for o in report["observations"]] == ["grads-zero-at-step"]


def test_torch_compile_runs_under_the_probe(reports):
    report, proc = reports("compiled.py")
    assert report is not None, proc.stderr
    assert report["steps"] == 3 and report["stopped_by"] == "end"
    assert [o["line"] for o in only(report, "device-mismatch")] == [10]


def test_without_simulation_a_cpu_run_sees_no_cuda(reports):
    report, proc = reports("device_input_not_moved.py", "--no-simulate-cuda")
    assert report["simulated_cuda"] is False
    assert report["observations"] == []
    assert proc.returncode == 0
    assert report["devices_checked"] is False


def test_without_gpu_or_simulation_device_findings_are_not_applicable_rather_than_not_observed(reports):
    from torchlint.probe import render

    report, proc = reports("noise_in_forward.py", "--no-simulate-cuda")
    assert report["devices_checked"] is False and proc.returncode == 0
    assert [(f["code"], f["line"], f["status"]) for f in report["findings"]] == [("TL304", 13, "not-applicable")]
    assert "TL304 not applicable on this machine" in render.to_text(report)
    simulated, _ = reports("noise_in_forward.py")
    assert [f["status"] for f in simulated["findings"]] == ["confirmed"]


def test_a_manual_update_that_never_clears_the_gradient_accumulates(reports):
    report, proc = reports("manual_update_accumulates.py")
    (obs,) = only(report, "grads-not-cleared")
    assert obs["line"] == 14 and obs["facts"]["parameters"] == 2  # at loss.backward()
    assert obs["facts"]["steps"] == [2, 3, 4, 5, 6, 7, 8] and obs["message"].endswith("never cleared")
    assert proc.returncode == 1
    clean, _ = reports("manual_sgd.py", "--max-steps", "5")  # p.grad.zero_() after each update
    assert only(clean, "grads-not-cleared") == []


def test_step_counts_say_what_was_watched_and_what_ran():
    from torchlint.probe import render

    obs = {"kind": "host-sync", "path": "/x/t.py", "line": 3, "message": "m", "count": 8, "first_step": 1, "facts": {}}
    crash = {**obs, "kind": "crash", "count": 1}
    base = {"script": "/x/t.py", "seconds": 1.0, "simulated_cuda": True, "devices_used": ["cuda:0"], "findings": []}
    report = {**base, "steps": 20, "watched_steps": 8, "stopped_by": "max-steps", "exception": None}
    text = render.to_text({**report, "observations": [obs]})
    assert "20 optimizer steps, 8 watched in full" in text and "(in 8 of 8 watched steps, from step 1)" in text
    at_import = {**base, "steps": 0, "watched_steps": 1, "stopped_by": "exception", "exception": {"type": "E"}}
    assert "(before any step)" in render.to_text({**at_import, "observations": [crash]})
