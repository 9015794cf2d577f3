"""Running user code safely: limits, exceptions, arguments, process trees, no writes to the user's tree."""

import hashlib
import os
import shutil
import time

import pytest
from probe_helpers import SCRIPTS, probe, reports  # noqa: F401 - the fixture

pytest.importorskip("torch")


def test_merge_statuses_end_to_end(reports):
    report, _ = reports("merge_statuses.py")
    by_line = {(f["code"], f["line"]): f["status"] for f in report["findings"]}
    assert ("TL101", 26) in by_line, f"TL101 no longer flags the loop the probe runs: {by_line}"
    assert by_line[("TL101", 14)] == "not-reached"
    assert by_line[("TL101", 26)] == "confirmed"
    report, _ = reports("missing_zero_grad.py", "--max-steps", "1")
    assert report["stopped_by"] == "max-steps" and report["steps"] == 1
    assert [(f["code"], f["status"]) for f in report["findings"]] == [("TL101", "not-observed")]


def test_exception_is_reported_at_the_user_line(reports):
    report, proc = reports("raises.py")
    assert report["stopped_by"] == "exception"
    assert report["exception"] == {
        "type": "ValueError",
        "message": "corrupt batch 2",
        "path": str(SCRIPTS / "raises.py"),
        "line": 6,
    }
    assert "ValueError: corrupt batch 2" in proc.stderr  # the script's traceback goes to stderr
    frames = [line for line in proc.stderr.splitlines() if line.startswith('  File "')]
    assert [f.split(",")[0].rsplit("/", 1)[-1] for f in frames] == ['raises.py"', 'raises.py"']  # none of ours


def test_os_exit_keeps_its_status_and_the_steps_it_ran(reports):
    report, proc = reports("dies.py")  # os._exit(7) after 3 steps
    assert (report["stopped_by"], report["exit_status"], report["steps"]) == ("end", 7, 3)
    assert report["exception"] is None
    assert proc.returncode == 7


@pytest.mark.parametrize(
    "how,status,words",
    [
        (["exit", "1"], 1, "the script exited with status 1"),
        (["exit", "0"], 0, "the script ended"),
        (["argparse"], 2, "the script exited with status 2"),
        (["os_exit", "5"], 5, "the script exited with status 5"),
    ],
)
def test_the_scripts_own_exit_status_is_kept_and_said(how, status, words):
    from torchlint.probe import render

    report, proc = probe(SCRIPTS / "ends_early.py", args=how)
    assert (proc.returncode, report["exit_status"], report["steps"]) == (status, status, 3), proc.stderr
    assert f"3 optimizer steps in {report['seconds']:.1f}s (simulated CUDA); {words}" in render.to_text(report)


def test_a_process_killed_by_a_signal_is_a_crash_with_nothing_said_after_it():
    from torchlint.probe import render

    report, proc = probe(SCRIPTS / "ends_early.py", args=["kill"])
    assert proc.returncode == 3
    assert report["exception"]["type"] == "ProcessDied"
    assert report["exception"]["message"] == "killed by SIGKILL"
    text = render.to_text(report)
    assert f"at least {report['steps']} optimizer steps" in text and "died (killed by SIGKILL)" in text
    assert "no runtime problems observed" not in text


def test_a_mistyped_option_is_named_as_unknown():
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "torchlint", "probe", "--max-step", "5", str(SCRIPTS / "raises.py")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "unknown option --max-step (did you mean --max-steps?)" in proc.stderr
    assert "required" not in proc.stderr


def test_a_notebook_of_another_kernel_language_is_refused_with_the_reason(tmp_path):
    import json
    import subprocess
    import sys

    nb = tmp_path / "flux.ipynb"
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "source": ["using Flux\n"]}]
    nb.write_text(json.dumps({"cells": cells, "metadata": {"kernelspec": {"language": "julia"}}, "nbformat": 4}))
    cmd = [sys.executable, "-m", "torchlint", "probe", str(nb)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "flux.ipynb: its kernel is not Python" in proc.stderr


def test_infinite_loop_is_stopped_by_the_time_limit(reports):
    report, proc = reports("forever.py", "--max-seconds", "3")
    assert report["stopped_by"] == "max-seconds"
    assert report["steps"] == 0


def test_the_time_limit_stays_the_cause_when_the_stop_comes_back_as_another_exception():
    """The limit's Stop is raised wherever the script is; code that wraps what it catches (as libraries
    wrapping a callback's exception do) turns it into another exception. Before, that run was reported
    as the script's crash (a CI run of forever.py once ended so)."""
    report, proc = probe(SCRIPTS / "forever_wrapping.py", "--max-seconds", "2", "--kill-after", "60")
    assert report["stopped_by"] == "max-seconds", proc.stderr
    assert report["exception"] is None


def test_a_slow_start_does_not_count_against_the_hard_limit(tmp_path):
    """The hard limit counts from the script's start, as --max-seconds does. Before, it counted from
    the launch: an interpreter slower to start and import torch than --kill-after (a loaded machine,
    here a 4 s sleep against 2 s) was killed before its script ran, and the run had no report."""
    import sys

    slow = tmp_path / "slow-python"
    slow.write_text(f'#!/bin/sh\nsleep 4\nexec "{sys.executable}" "$@"\n')
    slow.chmod(0o755)
    report, proc = probe(SCRIPTS / "forever.py", "--max-seconds", "1", "--kill-after", "2", "--python", str(slow))
    assert report is not None, proc.stderr
    assert report["stopped_by"] == "max-seconds" and report["exception"] is None
    assert report["seconds"] >= 1


def test_step_limit(reports):
    report, _ = reports("missing_zero_grad.py", "--max-steps", "2")
    assert report["steps"] == 2 and report["stopped_by"] == "max-steps"


def test_arguments_and_working_directory(tmp_path):
    report, proc = probe(SCRIPTS / "args_and_cwd.py", cwd=tmp_path, args=["--flag", "x y"])
    assert report["stopped_by"] == "end"
    assert f"ARGS ['--flag', 'x y'] CWD {tmp_path}" in proc.stderr  # JSON mode: script output on stderr


def test_the_documented_order_script_then_options_then_script_arguments(tmp_path):
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "torchlint", "probe", str(SCRIPTS / "args_and_cwd.py"), "--output-format", "json"]
    proc = subprocess.run([*cmd, "--", "--epochs", "1"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "ARGS ['--epochs', '1']" in proc.stderr


@pytest.mark.parametrize(
    "argv,ours,theirs",
    [
        (["t.py", "--", "--epochs", "1"], ["t.py"], ["--epochs", "1"]),
        (["--max-steps", "3", "t.py", "--epochs", "1"], ["--max-steps", "3", "t.py"], ["--epochs", "1"]),
        (
            ["t.py", "--output-format", "json", "--max-seconds", "5"],
            ["t.py", "--output-format", "json", "--max-seconds", "5"],
            [],
        ),
        (
            ["t.py", "--max-steps=2", "--lr", "0.1", "--max-steps", "9"],
            ["t.py", "--max-steps=2"],
            ["--lr", "0.1", "--max-steps", "9"],
        ),
        (["--no-simulate-cuda", "t.py", "data", "-v"], ["--no-simulate-cuda", "t.py"], ["data", "-v"]),
        (["t.py", "--", "--max-steps", "1"], ["t.py"], ["--max-steps", "1"]),
    ],
)
def test_probe_options_on_either_side_of_the_script(argv, ours, theirs):
    from torchlint.probe.cli import build_parser, split_command_line

    assert split_command_line(build_parser(), argv) == (ours, theirs)


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc")
def test_no_process_survives_workers_forks_or_ignored_sigterm(tmp_path):
    pids_file = tmp_path / "pids"
    report, proc = probe(
        SCRIPTS / "workers_and_fork.py", "--max-steps", "3", "--max-seconds", "60", args=[str(pids_file)]
    )
    assert report is not None, proc.stderr
    pids = [int(p) for p in pids_file.read_text().split()]
    assert len(pids) == 3  # the forked sleeper and two DataLoader workers
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in pids if _alive(p)]


def _tree_digest(root):
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def test_probe_never_writes_into_the_users_tree(tmp_path):
    tree = tmp_path / "project"
    shutil.copytree(SCRIPTS, tree, ignore=shutil.ignore_patterns("__pycache__"))
    (tree / "helpers.py").write_text("def scale(x):\n    return x * 2\n")
    (tree / "main.py").write_text("import torch\nfrom helpers import scale\nprint(scale(torch.ones(2)))\n")
    before = _tree_digest(tree)
    for script in ("main.py", "tensor_attribute.py", "raises.py"):
        report, proc = probe(tree / script, cwd=tree)
        assert report is not None, proc.stderr
    assert _tree_digest(tree) == before


def test_a_notebook_runs_its_code_cells_in_order_and_reports_in_cell_positions(reports):
    report, proc = reports("notebook_training.ipynb")
    assert proc.returncode == 1, proc.stderr
    assert (report["steps"], report["stopped_by"]) == (5, "end")
    notebook = str(SCRIPTS / "notebook_training.ipynb")
    where = {o["kind"]: (o["path"], o["line"]) for o in report["observations"]}
    assert where == {
        "device-mismatch": (f"{notebook}:cell_4", 4),  # loss = model(x).sum(), the 4th line of cell 4
        "grads-not-cleared": (f"{notebook}:cell_4", 6),
    }
    assert [(f["path"], f["line"], f["code"], f["status"]) for f in report["findings"]] == [
        (f"{notebook}:cell_4", 2, "TL101", "confirmed")
    ]
    # IPython lines are skipped, and said so
    assert "IPython line skipped, cell 2: %matplotlib inline" in proc.stderr
    assert "IPython line skipped, cell 4: !nvidia-smi" in proc.stderr
