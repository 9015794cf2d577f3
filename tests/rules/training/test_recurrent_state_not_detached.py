"""TL119 recurrent-state-not-detached beyond its embedded examples: the detaching spellings real code
uses, states that only thread one sequence, and where the fix goes."""

from __future__ import annotations

import textwrap

import pytest

HEAD = """\
import torch
from torch import nn
rnn = nn.GRU(8, 16)
criterion = nn.MSELoss()
hidden = torch.zeros(1, 4, 16)
"""

CASES = [
    # (id, loop, expected lines counted from the loop's first line)
    (
        "carried-and-backpropagated",
        """
        for x, y in chunks:
            out, hidden = rnn(x, hidden)
            criterion(out, y).backward()
        """,
        [2],
    ),
    (
        "detached-through-the-data-attribute",
        """
        for x, y in chunks:
            hidden = hidden.data
            out, hidden = rnn(x, hidden)
            criterion(out, y).backward()
        """,
        [],
    ),
    (
        "re-initialised-from-the-model",
        """
        for x, y in chunks:
            hidden = torch.zeros(1, 4, 16)
            out, hidden = rnn(x, hidden)
            criterion(out, y).backward()
        """,
        [],
    ),
    (
        "repackaged-inside-the-call",
        """
        for x, y in chunks:
            out, hidden = rnn(x, repackage(hidden))
            criterion(out, y).backward()
        """,
        [],
    ),
    (
        "detached-in-place-by-a-helper",
        """
        for x, y in chunks:
            detach_all(hidden)
            out, hidden = rnn(x, hidden)
            criterion(out, y).backward()
        """,
        [],
    ),
    (
        "elements-detached-in-place",
        """
        for x, y in chunks:
            for h in hidden:
                h.detach_()
            out, hidden = rnn(x, hidden)
            criterion(out, y).backward()
        """,
        [],
    ),
    (
        "no-backward-in-the-loop",
        """
        for x, y in chunks:
            out, hidden = rnn(x, hidden)
            outputs.append(out)
        """,
        [],
    ),
    (
        "backward-of-a-loss-that-does-not-use-the-call",
        """
        for x, y in chunks:
            out, hidden = rnn(x, hidden)
            criterion(other(x), y).backward()
        """,
        [],
    ),
    (
        "under-no-grad",
        """
        for x, y in chunks:
            with torch.no_grad():
                out, hidden = rnn(x, hidden)
            criterion(head(out), y).backward()
        """,
        [],
    ),
    (
        "result-under-another-name",
        """
        for x, y in chunks:
            out, new_hidden = rnn(x, hidden)
            criterion(out, y).backward()
        """,
        [],
    ),
    (
        "carried-across-epochs-reported-once",
        """
        for epoch in range(3):
            for x, y in chunks:
                out, hidden = rnn(x, hidden)
                criterion(out, y).backward()
        """,
        [3],
    ),
]


@pytest.mark.parametrize("case,loop,lines", CASES, ids=[c[0] for c in CASES])
def test_case(case, loop, lines, findings):
    got = findings(HEAD + textwrap.dedent(loop).lstrip("\n"), "TL119")
    offset = HEAD.count("\n")
    assert [f.line - offset for f in got] == lines, [f"{f.line}: {f.message}" for f in got]


def test_fix_goes_to_the_start_of_the_loop_that_runs_backward(fixed):
    src = HEAD + textwrap.dedent(
        """\
        for epoch in range(3):
            for x, y in chunks:
                out, hidden = rnn(x, hidden)
                criterion(out, y).backward()
        """
    )
    assert fixed(src, "TL119") == HEAD + textwrap.dedent(
        """\
        for epoch in range(3):
            for x, y in chunks:
                hidden = hidden.detach()
                out, hidden = rnn(x, hidden)
                criterion(out, y).backward()
        """
    )


def test_no_fix_when_the_state_starts_as_none(findings):
    src = (
        "from torch import nn\nrnn = nn.GRU(8, 16)\nhidden = None\n"
        "for x, y in chunks:\n    out, hidden = rnn(x, hidden)\n    criterion(out, y).backward()\n"
    )
    (finding,) = findings(src, "TL119")
    assert finding.fix is None


def test_retained_graph_says_the_graph_grows(findings):
    src = (
        HEAD
        + "for x, y in chunks:\n    out, hidden = rnn(x, hidden)\n    criterion(out, y).backward(retain_graph=True)\n"
    )
    (finding,) = findings(src, "TL119")
    assert "grow without bound" in finding.message


@pytest.mark.parametrize(
    "start,detach",
    [
        ("(torch.zeros(1, 4, 16), torch.zeros(1, 4, 16))", "state = tuple(h.detach() for h in state)"),
        ("torch.zeros(1, 4, 16).to(device)", "state = state.detach()"),
    ],
    ids=["starts-as-a-tuple", "starts-as-a-tensor"],
)
def test_fix_takes_the_shape_from_the_starting_value(start, detach, fixed):
    head = f"import torch\nfrom torch import nn\ndef train(model: nn.Module, chunks):\n    state = {start}\n"
    loop = "    for x, y in chunks:\n        out, state = model(x, state)\n        criterion(out, y).backward()\n"
    after = "    for x, y in chunks:\n        " + detach + "\n        out, state = model(x, state)\n"
    assert fixed(head + loop, "TL119") == head + after + "        criterion(out, y).backward()\n"


def test_a_model_of_the_file_that_detaches_the_state_it_returns_is_silent(findings):
    src = textwrap.dedent(
        """\
        import torch
        from torch import nn
        class Stateful(nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = nn.GRU(8, 16)
            def forward(self, x, h):
                out, h = self.rnn(x, h)
                return out, h.detach()
        model = Stateful()
        hidden = torch.zeros(1, 4, 16)
        for x, y in chunks:
            out, hidden = model(x, hidden)
            criterion(out, y).backward()
        """
    )
    assert findings(src, "TL119") == []
    assert len(findings(src.replace("h.detach()", "h"), "TL119")) == 1
