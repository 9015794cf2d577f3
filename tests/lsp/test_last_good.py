"""Typing through a syntax error: the last good findings move with their unchanged lines."""

from __future__ import annotations

from lsprotocol import types

from torchlint.lsp import last_good


def _diag(code: str, line: int, end_line: int | None = None, noqa: int | None = None) -> types.Diagnostic:
    rng = types.Range(types.Position(line, 0), types.Position(line if end_line is None else end_line, 3))
    data = {"generation": 1, "fixes": [{"title": "fix", "edits": []}], "noqa": [line if noqa is None else noqa]}
    return types.Diagnostic(rng, code, code=code, source="torchlint", data=data)


def test_findings_on_unchanged_lines_stay_moved_and_the_others_go():
    old = "a = 1\nb = 2\nc = 3\nd = 4\n"
    new = "a = 1\nb = 2\noops = foo(1,\nc = 3\nd = 4\n"  # a line typed between b and c, b changed
    new = new.replace("b = 2", "b = 22")
    last = last_good.Lint(
        old, [_diag("TL1", 0), _diag("TL2", 1), _diag("TL3", 2), _diag("TL4", 2, 3), _diag("TL000", 3)]
    )
    error = types.Diagnostic(types.Range(types.Position(2, 10), types.Position(2, 10)), "syntax error", code="TL000")
    out = last_good.carried(last, new, [error], generation=7)
    assert [(d.code, d.range.start.line, d.range.end.line) for d in out] == [
        ("TL000", 2, 2),
        ("TL1", 0, 0),
        ("TL3", 3, 3),
        ("TL4", 3, 4),
    ]
    moved = out[2].data
    assert moved["generation"] == 7 and moved["fixes"] == [] and moved["noqa"] == [3]


def test_a_fresh_finding_is_not_doubled_by_its_old_self():
    text = "x = 1\n"
    fresh = [_diag("TL1", 0)]
    assert len(last_good.carried(last_good.Lint(text, [_diag("TL1", 0)]), text, fresh, 2)) == 1
    assert last_good.broken({"u": [_diag("TL000", 0)]}) and not last_good.broken({"u": fresh})
