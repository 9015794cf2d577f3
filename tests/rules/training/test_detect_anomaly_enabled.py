"""TL113 detect-anomaly-enabled beyond its embedded examples: look-alikes that must stay silent, bugs
that hide in classes, helpers and nested blocks, and where each finding lands."""

from __future__ import annotations

import textwrap

import pytest

CASES = [
    # (id, path, source, expected lines)
    (
        "detect-anomaly-in-a-test-file",
        "tests/test_grad.py",
        """
        import torch
        torch.autograd.set_detect_anomaly(True)
    """,
        [],
    ),
    (
        "detect-anomaly-in-main-guard",
        "train.py",
        """
        import torch
        if __name__ == "__main__":
            torch.autograd.set_detect_anomaly(True)
            main()
    """,
        [3],
    ),
]


@pytest.mark.parametrize("case,path,src,lines", CASES, ids=[c[0] for c in CASES])
def test_case(case, path, src, lines, findings):
    got = findings(textwrap.dedent(src).lstrip("\n"), "TL113", path)
    assert [f.line for f in got] == lines, [f"{f.line}: {f.message}" for f in got]
