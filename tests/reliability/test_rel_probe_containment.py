"""Adversarial scripts against the probe: hiding processes, flooding output, cutting its channel;
and the language server must never start it unasked or when the client has turned it off.
(The ordinary containment cases — forks, workers, ignored SIGTERM, exceptions — are in tests/probe/.)
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from selecting import extend_select

pytest.importorskip("torch")
SCRIPTS = Path(__file__).resolve().parent / "probe_scripts"
MARK = "6d1f"  # in every script's name, so its processes (and their forks) can be found in /proc


def _leftovers() -> list[int]:
    pids = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().decode("utf-8", "replace")
            state = (cmdline.parent / "stat").read_text().split(") ")[1][0]
        except (OSError, IndexError):
            continue
        if MARK in text and "pytest" not in text and state != "Z":
            pids.append(int(cmdline.parent.name))
    return pids


def _probe(script: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "torchlint",
        "probe",
        "--output-format",
        "json",
        "--max-seconds",
        "4",
        "--kill-after",
        "2",
        str(SCRIPTS / script),
        *(["--", *args] if args else []),
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=cwd)


def _no_leftovers() -> None:
    deadline = time.monotonic() + 10  # reaping is asynchronous: give the kernel a moment
    while _leftovers() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _leftovers(), f"processes outlived the probe: {_leftovers()}"


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc to find leftover processes")
def test_processes_that_hide_from_the_kill_are_killed(tmp_path):
    pids = tmp_path / "pids"
    r = _probe("escapes_6d1f.py", str(pids), cwd=tmp_path)
    assert r.returncode in (0, 1, 2) and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert len(pids.read_text().split()) == 2, "the script did not get to start its hiders"
    _no_leftovers()


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc to find leftover processes")
def test_output_flood_neither_hangs_nor_corrupts_the_report(tmp_path):
    r = _probe("floods_6d1f.py", cwd=tmp_path)
    assert r.returncode in (0, 1, 2) and "Traceback" not in r.stderr[-5000:], r.stderr[-2000:]
    if r.stdout.strip():  # JSON mode: the script's output must not land in the report
        json.loads(r.stdout)
    _no_leftovers()


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc to find leftover processes")
def test_sigint_stops_the_run_even_when_it_started_ignored(tmp_path):
    """The language server cancels a run with SIGINT. A probe started with SIGINT ignored (a background
    job of a non-interactive shell, some editors) went on to --max-seconds, and the cancel with it."""
    cmd = [sys.executable, "-m", "torchlint", "probe", "--output-format", "json", "--max-seconds", "120"]
    ignore = lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)  # noqa: E731 - run in the child before exec
    proc = subprocess.Popen(
        [*cmd, str(SCRIPTS / "forever_6d1f.py")],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=ignore,
    )
    deadline = time.monotonic() + 120
    while len(_leftovers()) < 2 and time.monotonic() < deadline:  # the probe and the script both run
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    try:
        proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130
    _no_leftovers()


def test_script_that_closes_the_report_channel_gets_a_clear_error(tmp_path):
    """The child's first report is written as the script starts (launch.py's clock), so the run is told as a
    process that died (exit 3), not as an error of the probe."""
    r = _probe("closes_fds_6d1f.py", cwd=tmp_path)
    assert r.returncode == 3 and "Traceback" not in r.stderr, r.stderr[-2000:]
    report = json.loads(r.stdout)
    assert report["exception"]["type"] == "ProcessDied" and report["exception"]["message"] == "exit status 1"
    assert report["steps"] == 0 and report["stopped_by"] == "exception"
    assert not list(tmp_path.iterdir()), "the probe wrote into the working directory"


EVIL = "open({marker!r}, 'w').write('ran')\nimport torch\nx = torch.load(p)\n"


def _booby_trapped(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "ran"
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(EVIL.format(marker=str(marker)))
    (project / "pyproject.toml").write_text(extend_select("TL601"))  # its finding shows the server linted
    return project / "train.py", marker


def _lsp():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lsp"))
    import lsp_session

    return lsp_session


# what the VS Code extension sends for an untrusted workspace, or with torchlint.probe.enabled off
PROBE_OFF = {"settings": {"probe": {"enabled": False, "timeoutSeconds": 60, "maxSteps": 20}}}


@pytest.mark.asyncio
async def test_server_never_runs_code_unasked(tmp_path):
    from lsprotocol import types

    script, marker = _booby_trapped(tmp_path)
    async with _lsp().session(script.parent, init_options=PROBE_OFF) as s:
        u = s.open(script, script.read_text())
        await s.diagnostics(u, lambda d: len(d) == 1)
        s.client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(u)))
        await s.client.workspace_execute_command_async(types.ExecuteCommandParams("torchlint.lintWorkspace", []))
        await s.diagnostics(u, lambda d: len(d) == 1)
    assert not marker.exists(), "opening, saving or linting ran the script"


@pytest.mark.asyncio
async def test_server_refuses_the_probe_when_the_client_turned_it_off(tmp_path):
    from lsprotocol import types
    from pygls.exceptions import JsonRpcException

    script, marker = _booby_trapped(tmp_path)
    async with _lsp().session(script.parent, init_options=PROBE_OFF) as s:
        u = s.open(script, script.read_text())
        with pytest.raises(JsonRpcException):
            await s.client.workspace_execute_command_async(types.ExecuteCommandParams("torchlint.runProbe", [u]))
    assert not marker.exists(), "the probe ran although the client turned it off"
