"""The static/runtime merge: confirmed, not observed, not reached."""

import pytest
from probe_helpers import SCRIPTS

from torchlint.findings import Finding, Severity
from torchlint.probe import merge


def finding(code, line, end_line=None, statement_line=0):
    return Finding(
        "/x/train.py", line, 1, end_line or line, 5, code, "name", "msg", Severity.ERROR, statement_line=statement_line
    )


def observation(kind, line, path="/x/train.py", sites=()):
    return {
        "kind": kind,
        "path": path,
        "line": line,
        "message": "m",
        "count": 1,
        "first_step": 1,
        "facts": {"sites": [{"path": p, "line": n} for p, n in sites]},
    }


KNOWN = {"TL101", "TL201", "TL301", "TL601"}


def test_statuses():
    findings = [finding("TL101", 10, 14), finding("TL301", 20), finding("TL301", 30), finding("TL201", 40)]
    observations = [
        observation("grads-not-cleared", 14),
        observation("device-mismatch", 50, sites=[("/x/train.py", 40)]),
    ]
    merged = merge.merge("/x/train.py", findings, observations, {10, 11, 12, 13, 14, 20, 50}, KNOWN)
    assert [(m["code"], m["line"], m["status"]) for m in merged] == [
        ("TL101", 10, "confirmed"),  # the observation is inside the finding's statement
        ("TL301", 20, "not-observed"),  # the line ran, no mismatch there
        ("TL301", 30, "not-reached"),  # the line never ran
        ("TL201", 40, "confirmed"),  # a related site of a device mismatch
    ]
    assert merged[0]["url"].endswith("TL101.md")


def test_only_observable_rules_and_known_codes_and_same_file():
    findings = [finding("TL601", 5), finding("TL301", 6)]
    observations = [observation("device-mismatch", 6, path="/x/other.py")]
    merged = merge.merge("/x/train.py", findings, observations, {5, 6}, KNOWN)
    assert [(m["code"], m["status"]) for m in merged] == [("TL301", "not-observed")]
    # a code the catalogue does not have (yet) is never confirmed
    assert (
        merge.merge("/x/train.py", [finding("TL301", 6)], [observation("device-mismatch", 6)], {6}, {"TL101"})[0][
            "status"
        ]
        == "not-observed"
    )


def test_every_kind_is_in_the_table():
    from torchlint.probe.observations import KINDS

    assert set(merge.KIND_CODES) == set(KINDS)


def test_parent_side_never_imports_torch():
    import subprocess
    import sys

    code = (
        "import sys; import torchlint.probe.cli, torchlint.probe.merge, torchlint.probe.launch, "
        "torchlint.probe.render; assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_script_and_bad_limits_are_clear_errors(tmp_path, capsys):
    from torchlint.probe import cli

    assert cli.main([str(tmp_path / "nope.py")]) == 2
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        cli.main(["--max-steps", "0", str(SCRIPTS / "raises.py")])
    assert exc.value.code == 2
    assert "must be positive" in capsys.readouterr().err


def test_text_report_lists_observations_then_findings():
    from torchlint.probe import render

    report = {
        "script": "/x/train.py",
        "steps": 3,
        "seconds": 1.0,
        "stopped_by": "max-steps",
        "simulated_cuda": True,
        "devices_used": ["cuda:0"],
        "exception": None,
        "observations": [{**observation("host-sync", 7), "facts": {"via": "lib.fn"}}],
        "findings": [{**finding("TL101", 9).to_json(), "status": "not-reached"}],
    }
    lines = render.to_text(report).splitlines()
    assert lines[0] == "probe: 3 optimizer steps in 1.0s (simulated CUDA); --max-steps reached"
    assert lines[1].endswith("train.py:7: host-sync: m (in 1 of 3 watched steps, from step 1) [via lib.fn]")
    assert lines[2] == "static findings:"
    assert lines[3].endswith("train.py:9: TL101 not reached: msg")
