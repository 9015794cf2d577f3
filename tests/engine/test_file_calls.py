"""`FileContext.file_calls`: what the file calls, from its summary's calls, never a word of its text."""

from __future__ import annotations

import libcst as cst

from torchlint.engine.context import FileContext


def _calls(source: str, *names: str) -> bool:
    return FileContext("t.py", source, cst.parse_module(source)).file_calls(*names)


def test_a_call_counts_a_mention_does_not():
    assert _calls("for e in range(3):\n    sampler.set_epoch(e)\n", "set_epoch")
    assert _calls("loss.backward()\n", "set_epoch", "backward")
    assert not _calls("# sampler.set_epoch(e) is called by the launcher\n", "set_epoch")
    assert not _calls('print("call set_epoch")\nhook = sampler.set_epoch\n', "set_epoch")
