"""Attribution through the user's call stack, and crashes as observations with their own exit status."""

import pytest
from probe_helpers import SCRIPTS, only, reports  # noqa: F401 - the fixture

from torchlint.probe import crashes, merge

pytest.importorskip("torch")


def lines_of(stack):
    return [(frame["path"].rsplit("/", 1)[-1], frame["line"]) for frame in stack]


def status(report, code, line):
    (found,) = [f["status"] for f in report["findings"] if f["code"] == code and f["line"] == line]
    return found


def test_mismatch_inside_a_custom_forward_confirms_the_call_in_the_loop(reports):
    report, proc = reports("custom_module_batch_not_moved.py")
    (obs,) = only(report, "device-mismatch")
    assert obs["line"] == 14  # self.fc1(x), inside forward
    name = "custom_module_batch_not_moved.py"
    assert lines_of(obs["stack"]) == [(name, 14), (name, 22), (name, 33)]  # forward < train < main
    assert status(report, "TL301", 22) == "confirmed"
    assert proc.returncode == 1


def test_a_factory_scaled_on_its_line_is_still_the_origin(reports):
    report, _ = reports("noise_in_forward.py")
    (obs,) = only(report, "device-mismatch")
    assert obs["line"] == 14 and lines_of(obs["stack"])[1] == ("noise_in_forward.py", 22)
    assert {"path": str(SCRIPTS / "noise_in_forward.py"), "line": 13} in obs["facts"]["sites"]
    assert status(report, "TL304", 13) == "confirmed"


def test_a_raising_script_exits_3_with_a_crash_observation(reports):
    report, proc = reports("raises.py")
    assert proc.returncode == 3
    (crash,) = only(report, "crash")
    assert (crash["line"], crash["message"]) == (6, "ValueError: corrupt batch 2")
    assert lines_of(crash["stack"]) == [("raises.py", 6), ("raises.py", 11)]
    assert "shows" not in crash["facts"]


def test_a_crash_shows_the_problem_its_error_names(reports):
    report, proc = reports("view_crash_in_model.py")
    assert proc.returncode == 3 and report["stopped_by"] == "exception"
    (crash,) = only(report, "crash")
    assert crash["facts"]["shows"] == "non-contiguous-view"
    assert lines_of(crash["stack"]) == [("view_crash_in_model.py", 13), ("view_crash_in_model.py", 20)]
    assert report["exception"]["line"] == 13
    assert status(report, "TL305", 13) == "confirmed"


def test_crash_messages_map_to_kinds():
    assert (
        crashes.shows("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!")
        == "device-mismatch"
    )
    assert crashes.shows("view size is not compatible with input tensor's size and stride (at least one ...)") == (
        "non-contiguous-view"
    )
    assert crashes.shows("CUDA out of memory") is None


def test_a_device_mismatch_crash_confirms_through_any_user_frame():
    from test_probe_merge import KNOWN, finding

    crash = {
        "kind": "crash",
        "path": "/x/model.py",
        "line": 14,
        "message": "RuntimeError: Expected all tensors to be on the same device",
        "count": 1,
        "first_step": 1,
        "facts": {"shows": "device-mismatch"},
        "stack": [{"path": "/x/model.py", "line": 14}, {"path": "/x/train.py", "line": 22}],
    }
    findings = [finding("TL301", 22), finding("TL101", 22)]
    merged = merge.merge("/x/train.py", findings, [crash], {22}, KNOWN)
    assert [(m["code"], m["status"]) for m in merged] == [("TL301", "confirmed"), ("TL101", "not-observed")]
    plain = {**crash, "facts": {}}
    assert merge.merge("/x/train.py", findings[:1], [plain], {22}, KNOWN)[0]["status"] == "not-observed"


def test_without_an_optimizer_each_backward_is_a_step(reports):
    report, proc = reports("manual_sgd.py", "--max-steps", "5")
    assert (report["steps"], report["step_kind"], report["stopped_by"]) == (5, "backward", "max-steps")
    assert proc.stderr.count("epoch ") == 4  # stopped right after the fifth backward(), not after 1000 epochs


def test_the_boot_file_of_nproc_per_node_runs_is_never_the_users_code():
    from torchlint.probe.sites import BOOT_FILE, Attributor

    assert Attributor().is_user(f"/tmp/torchlint-probe-x/{BOOT_FILE}") is False
    assert Attributor().is_user("/tmp/torchlint-probe-x/train.py") is True


def test_a_crash_message_that_carries_another_processs_traceback_keeps_its_error():
    from torchlint.probe.child import _summary

    spawned = "\n\n-- Process 0 terminated with the following error:\nTraceback (most recent call last):\n"
    spawned += '  File "t.py", line 3, in run\n    torch.cuda.set_device(rank)\nRuntimeError: no GPU\n'
    assert _summary(spawned) == "-- Process 0 terminated with the following error: RuntimeError: no GPU"
    assert _summary("corrupt batch 2") == "corrupt batch 2"
    assert _summary("") == ""
