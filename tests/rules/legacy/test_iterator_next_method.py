"""TL707 iterator-next-method beyond its embedded examples."""

from __future__ import annotations

from torchlint.engine import lint_text
from torchlint.registry import rules

LOADER_ITER = "from torch.utils.data import DataLoader\nit = iter(DataLoader(ds))\nx = it.next()\n"


def test_tl707_dataloader_iterator_is_keyed_to_the_alias_removal():
    # torch < 1.13 DataLoader iterators still had `next = __next__`
    rule = [rules()["TL707"]]
    assert lint_text("m.py", LOADER_ITER, rule, torch_version="1.12").findings == []
    assert [f.line for f in lint_text("m.py", LOADER_ITER, rule, torch_version="1.13").findings] == [3]


def test_tl707_unknown_iterable_before_1_13_is_silent_but_a_list_is_not():
    rule = [rules()["TL707"]]
    unknown = "it = iter(source)\nit.next()\n"
    listed = "it = iter([1, 2])\nit.next()\n"
    assert lint_text("m.py", unknown, rule, torch_version="1.12").findings == []
    assert len(lint_text("m.py", listed, rule, torch_version="1.12").findings) == 1


def test_tl707_for_target_rebinding_is_silent(findings):
    src = "it = iter(xs)\nfor it in cursors:\n    it.next()\n"
    assert findings(src, "TL707") == []


def test_tl707_no_fix_when_next_is_shadowed(findings):
    src = "next = 3\nit = iter([1])\nit.next()\n"
    [f] = findings(src, "TL707")
    assert f.fix is None


def test_tl707_next_with_arguments_is_silent(findings):
    assert findings("it = iter([1])\nit.next(5)\n", "TL707") == []
