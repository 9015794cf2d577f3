"""TL118 host-sync-every-step beyond its embedded examples: which conditions count as periodic, which
reads run every step, and when the statement can be moved."""

from __future__ import annotations

import textwrap

import pytest

HEAD = """\
import torch
from torch import nn
model = nn.Linear(4, 2).cuda()
criterion = nn.MSELoss()
"""

CASES = [
    # (id, loop, expected lines counted from the loop's first line)
    (
        "float-of-the-loss",
        """
        for step, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            value = float(loss)
            if (step + 1) % 10 == 0 and step > 0:
                log(value)
        """,
        [5],
    ),
    (
        "tolist-of-the-output-read-in-a-nested-if",
        """
        for step, (x, y) in enumerate(loader):
            out = model(x)
            criterion(out, y).backward()
            optimizer.step()
            scores = out.tolist()
            if not step % 100:
                if rank == 0:
                    print(scores[0])
        """,
        [5],
    ),
    (
        "read-in-the-else-arm",
        """
        for step, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            value = loss.item()
            if step % 10 == 0:
                print(value)
            else:
                history.append(value)
        """,
        [],
    ),
    (
        "read-in-the-condition",
        """
        for step, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            value = loss.item()
            if step % 10 == 0 and value < best:
                save()
        """,
        [],
    ),
    (
        "read-after-the-loop",
        """
        for step, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            value = loss.item()
            if step % 10 == 0:
                print(value)
        print("last", value)
        """,
        [],
    ),
    (
        "a-condition-that-is-not-periodic",
        """
        for step, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            value = loss.item()
            if verbose:
                print(value)
        """,
        [],
    ),
    (
        "string-formatting-is-not-a-period",
        """
        for step, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            value = loss.item()
            if "%d" % step == "10":
                print(value)
        """,
        [],
    ),
    (
        "not-a-training-loop",
        """
        for step, (x, y) in enumerate(loader):
            value = criterion(model(x), y).item()
            if step % 10 == 0:
                print(value)
        """,
        [],
    ),
    (
        "a-number-from-the-data",
        """
        for step, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            count = y.sum().item()
            if step % 10 == 0:
                print(count)
        """,
        [],
    ),
    (
        "inside-autocast",
        """
        for step, (x, y) in enumerate(loader):
            with torch.autocast("cuda"):
                loss = criterion(model(x), y)
                value = loss.item()
            loss.backward()
            if step % 10 == 0:
                print(value)
        """,
        [4],
    ),
]


@pytest.mark.parametrize("case,loop,lines", CASES, ids=[c[0] for c in CASES])
def test_case(case, loop, lines, findings):
    got = findings(HEAD + textwrap.dedent(loop).lstrip("\n"), "TL118")
    offset = HEAD.count("\n")
    assert [f.line - offset for f in got] == lines, [f"{f.line}: {f.message}" for f in got]


def _loop(text: str) -> str:
    return HEAD + textwrap.dedent(text).lstrip("\n")


def test_no_fix_when_a_statement_between_rebinds_what_it_reads(findings):
    src = _loop(
        """
        for step, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            value = loss.item()
            loss = None
            if step % 10 == 0:
                print(value)
        """
    )
    (finding,) = findings(src, "TL118")
    assert finding.fix is None


def test_no_fix_for_a_one_line_if_body(findings):
    src = _loop(
        """
        for step, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            value = loss.item()
            if step % 10 == 0: print(value)
        """
    )
    (finding,) = findings(src, "TL118")
    assert finding.fix is None


def test_no_fix_when_the_copy_sits_in_a_with_block(findings):
    src = _loop(
        """
        for step, (x, y) in enumerate(loader):
            with torch.autocast("cuda"):
                loss = criterion(model(x), y)
                value = loss.item()
            loss.backward()
            if step % 10 == 0:
                print(value)
        """
    )
    (finding,) = findings(src, "TL118")
    assert finding.fix is None


def test_fix_moves_the_statement_with_its_comment(fixed):
    src = _loop(
        """
        for step, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            value = loss.item()  # for the log
            optimizer.step()
            if step % 10 == 0:
                print(value)
        """
    )
    assert fixed(src, "TL118") == _loop(
        """
        for step, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            if step % 10 == 0:
                value = loss.item()  # for the log
                print(value)
        """
    )


def test_tl118_all_reduce_read_on_rank_zero_only_is_left_alone(findings):
    """A collective must run on every rank: moving it under `if rank == 0` would hang the others."""
    src = (
        "import torch.distributed as dist\nfrom torch import nn\nmodel = nn.Linear(4, 2).cuda()\n"
        "for x, y in loader:\n    loss = criterion(model(x), y)\n    loss.backward()\n    optimizer.step()\n"
        "    logged = loss.detach()\n    dist.all_reduce(logged)\n    if dist.get_rank() == 0:\n        print(logged)\n"
    )
    assert findings(src, "TL118") == []


def test_tl118_rank_from_the_environment(findings):
    src = (
        "import os\nfrom torch import nn\nrank = int(os.environ['RANK'])\nmodel = nn.Linear(4, 2).cuda()\n"
        "for x, y in loader:\n    loss = criterion(model(x), y)\n    loss.backward()\n    optimizer.step()\n"
        "    value = loss.item()\n    if rank == 0:\n        print(value)\n"
    )
    (f,) = findings(src, "TL118")
    assert f.line == 9 and "rank == 0" in f.message


def test_tl118_a_variable_called_rank_is_no_evidence(findings):
    src = (
        "from torch import nn\nmodel = nn.Linear(4, 2).cuda()\n"
        "for x, y in loader:\n    loss = criterion(model(x), y)\n    loss.backward()\n    optimizer.step()\n"
        "    value = loss.item()\n    if rank == 0:\n        print(value)\n"
    )
    assert findings(src, "TL118") == []
