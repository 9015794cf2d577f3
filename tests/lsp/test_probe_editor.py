"""The runtime probe as the editor shows it: observations at their expression with a link to
their kind's docs, static findings marked confirmed / not observed / not reached, the install
advice when the script's interpreter has no torch, and each kind's docs served like a rule's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from lsp_session import session
from lsprotocol import types

from torchlint.lsp import probe_runner
from torchlint.lsp.probe_docs import KIND_DOCS
from torchlint.probe.merge import KIND_CODES
from torchlint.probe.observations import KINDS

ROOT = Path(__file__).resolve().parents[2]
UTF16 = types.PositionEncodingKind.Utf16
SCRIPT = """\
import torch
x = torch.ones(2)  # a comment
for step in range(3):
    total = x.sum().item()
y = "🔥" + str(x.view(2))
"""


def report(path: Path, observations: list[dict], findings: list[dict]) -> str:
    return json.dumps({"observations": observations, "findings": findings})


def test_an_observation_without_columns_covers_its_line_code_not_its_indent_or_comment(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SCRIPT, encoding="utf-8")
    out = report(
        path,
        [
            {"kind": "host-sync", "path": str(path), "line": 4, "message": "sync", "count": 3},
            {"kind": "implicit-copy", "path": str(path), "line": 2, "message": "copy"},
            {"kind": "crash", "path": str(tmp_path / "other.py"), "line": 1, "message": "elsewhere"},
        ],
        [],
    )
    run = probe_runner._report(out, str(path), UTF16)
    sync, copy = run.observations
    assert (sync.range.start.line, sync.range.start.character, sync.range.end.character) == (3, 4, 26)
    assert (copy.range.start.character, copy.range.end.character) == (0, 17)  # `x = torch.ones(2)`
    assert sync.code == "host-sync" and sync.message == "sync (seen at runtime in 3 steps)"
    assert sync.code_description.href == probe_runner.KIND_DOCS_URL
    assert sync.source == "torchlint-probe"


def test_an_observation_with_columns_covers_exactly_its_expression_in_utf16(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SCRIPT, encoding="utf-8")
    view = {"kind": "non-contiguous-view", "line": 5, "column": 15, "end_line": 5, "end_column": 24, "message": "v"}
    (obs,) = probe_runner._report(report(path, [view], []), str(path), UTF16).observations
    assert SCRIPT.splitlines()[4][14:23] == "x.view(2)"  # code points; the emoji is two UTF-16 units
    assert (obs.range.start.character, obs.range.end.character) == (15, 24)


def test_static_findings_are_marked_with_the_status_the_run_gave_them(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SCRIPT, encoding="utf-8")
    findings = [
        {"code": "TL101", "path": str(path), "line": 3, "column": 1, "status": "confirmed"},
        {"code": "TL305", "path": str(path), "line": 5, "column": 1, "status": "not-reached"},
        {"code": "TL111", "path": str(path), "line": 2, "column": 1, "status": "not-observed"},
    ]
    run = probe_runner._report(report(path, [], findings), str(path), UTF16)

    def diag(code: str, line: int) -> types.Diagnostic:
        return types.Diagnostic(types.Range(types.Position(line, 0), types.Position(line, 3)), "msg", code=code)

    marked = run.with_lint([diag("TL101", 2), diag("TL305", 4), diag("TL111", 1), diag("TL101", 3)])
    assert [d.message for d in marked] == [
        "msg [confirmed by the runtime probe]",
        "msg [not reached by the runtime probe (its lines did not run)]",
        "msg [not observed by the runtime probe (its lines ran)]",
        "msg",  # edited onto another line since the run: no longer matched
    ]


def test_the_run_follows_edits_above_its_lines_and_forgets_edited_ones(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SCRIPT, encoding="utf-8")
    view = {"kind": "non-contiguous-view", "path": str(path), "line": 5, "message": "view of a non-contiguous tensor"}
    findings = [
        {"code": "TL101", "path": str(path), "line": 3, "column": 1, "status": "confirmed"},
        {"code": "TL111", "path": str(path), "line": 2, "column": 1, "status": "not-observed"},
    ]
    run = probe_runner._report(report(path, [view], findings), str(path), UTF16)
    lines = SCRIPT.splitlines(keepends=True)
    run.follow("# one\n# two\n" + SCRIPT)  # two lines typed above everything
    assert [d.range.start.line for d in run.observations] == [6]
    assert run.statuses == {("TL101", 4): "confirmed", ("TL111", 3): "not-observed"}
    run.follow("# one\n# two\n" + lines[0] + "changed = 1\n" + "".join(lines[2:]))  # line 2 of the script edited
    assert [d.range.start.line for d in run.observations] == [6]
    assert run.statuses == {("TL101", 4): "confirmed"}


def test_every_observation_kind_has_the_docs_of_docs_probe_md():
    assert set(KIND_DOCS) == set(KINDS)
    table = (ROOT / "docs" / "probe.md").read_text(encoding="utf-8")
    for kind, text in KIND_DOCS.items():
        row = re.search(rf"^\| `{re.escape(kind)}` \| (.*) \| (.*) \|$", table, re.M)
        assert row is not None, kind
        assert row.group(1) == text, kind
        assert re.findall(r"TL\d{3}", row.group(2)) == list(KIND_CODES[kind]), kind


@pytest.mark.asyncio
async def test_a_kind_has_its_docs_like_a_rule(project):
    async with session(project) as s:
        docs = await s.client.workspace_execute_command_async(
            types.ExecuteCommandParams("torchlint.showRuleDocs", ["grads-not-cleared"])
        )
        assert docs["code"] == "grads-not-cleared"
        assert docs["markdown"].startswith("# Runtime probe: grads-not-cleared")
        assert "TL101" in docs["markdown"]


def test_without_torch_in_the_interpreter_the_advice_is_to_install_torch():
    # what `torchlint probe` prints when the script's interpreter cannot import torch (probe/child.py, cli.py)
    err = (
        "torchlint probe: error: cannot import torch in /proj/.venv/bin/python: No module named 'torch'; "
        "the probe needs only torch there: `/proj/.venv/bin/python -m pip install torch`\n"
    )
    advice = probe_runner._failure(2, err, "/proj/.venv/bin/python")
    assert advice == "the probe needs torch in /proj/.venv/bin/python: install it there with `pip install torch`"
    assert probe_runner._failure(1, "some output of the script\n", "python") is None
    assert probe_runner._failure(2, "torchlint probe: error: no such file\n", "python") == (
        "probe failed (exit 2): torchlint probe: error: no such file"
    )
    # A report was printed: the script's own exit status (sys.exit(2)) or what simulation lacked (4) is in it.
    assert probe_runner._failure(2, "usage: train.py\n", "python", reported=True) is None
    assert probe_runner._failure(4, "RuntimeError: ...\n", "python", reported=True) is None


def test_a_refused_request_is_logged_by_the_client_only_not_as_a_server_error_with_traceback(caplog):
    import logging

    from pygls.exceptions import JsonRpcInvalidParams

    from torchlint.lsp.protocol import _REFUSALS

    pygls_log = logging.getLogger("pygls.protocol.json_rpc")
    pygls_log.addFilter(_REFUSALS)
    with caplog.at_level(logging.INFO):
        try:
            raise JsonRpcInvalidParams("the probe needs torch in python: install it there with `pip install torch`")
        except JsonRpcInvalidParams:
            pygls_log.exception('Exception occurred for message "%s"', 7)
        try:
            raise ValueError("a bug")
        except ValueError:
            pygls_log.exception('Exception occurred for message "%s"', 8)
    assert [(r.levelname, r.exc_info is not None) for r in caplog.records] == [("ERROR", True)]
    assert "a bug" in caplog.text and "pip install torch" not in caplog.text


def _site_of_caller():
    import sys

    from torchlint.probe.sites import Site

    frame = sys._getframe(1)
    return Site(frame.f_code.co_filename, frame.f_lineno, None, (), frame.f_code, frame.f_lasti)


def test_a_probe_site_knows_the_expression_its_frame_was_evaluating():
    """What the probe reports as an observation's column range: the call being made, in code points."""
    import inspect

    label = "é"; site = [label, _site_of_caller()][1]  # fmt: skip # noqa: E702
    line = inspect.getsource(test_a_probe_site_knows_the_expression_its_frame_was_evaluating).splitlines()[4]
    start, end = line.index("_site_of_caller()"), line.index("_site_of_caller()") + len("_site_of_caller()")
    assert site.span() == (site.line, start + 1, site.line, end + 1)
    assert line.strip().startswith('label = "é"')


def test_the_server_reports_a_refusal_to_the_client_once_and_logs_real_errors(caplog):
    import logging

    from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams
    from pygls.lsp.server import FeatureRequestError

    from torchlint.lsp.server import TorchlintServer

    server = TorchlintServer.__new__(TorchlintServer)  # no connection: only what it logs and sends
    sent = []
    server.window_log_message = sent.append  # type: ignore[method-assign]
    with caplog.at_level(logging.DEBUG, logger="torchlint.lsp"):
        server.report_server_error(JsonRpcInvalidParams("the probe needs torch"), FeatureRequestError)
        server.report_server_error(JsonRpcInternalError("a bug"), FeatureRequestError)
    assert [m.message for m in sent] == ["torchlint server: the probe needs torch", "torchlint server: a bug"]
    assert [(r.levelname, "torch" in r.getMessage()) for r in caplog.records] == [("DEBUG", True), ("ERROR", False)]
