"""One `if __name__ == "__main__":` predicate serves the program check and TL113's guard exemption."""

from __future__ import annotations

import libcst as cst
import pytest

from torchlint.engine import lint_text
from torchlint.engine.semantic.names import is_main_guard
from torchlint.registry import rules


@pytest.mark.parametrize(
    "test,expected",
    [
        ('__name__ == "__main__"', True),
        ("'__main__' == __name__", True),
        ('__name__ != "__main__"', False),
        ('__name__ == "__mp_main__"', False),
        ("name == '__main__'", False),
        ("__name__", False),
    ],
)
def test_is_main_guard(test, expected):
    assert is_main_guard(cst.parse_expression(test)) is expected


def test_tl113_treats_only_the_main_guard_as_unconditional():
    body = "    torch.autograd.set_detect_anomaly(True)\n    loss.backward()\n"
    guarded = lint_text("t.py", 'import torch\nif __name__ == "__main__":\n' + body, [rules()["TL113"]])
    debug_only = lint_text("t.py", "import torch\nif args.debug:\n" + body, [rules()["TL113"]])
    assert [f.line for f in guarded.findings] == [3]
    assert debug_only.findings == []
