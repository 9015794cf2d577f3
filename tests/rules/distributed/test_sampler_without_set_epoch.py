"""TL403 sampler-without-set-epoch beyond its embedded examples."""

from __future__ import annotations


def test_tl403_named_sampler_in_same_function_is_used_by_the_fix(fixed):
    src = (
        "from torch.utils.data import DataLoader, DistributedSampler\n"
        "def fit(ds):\n    s = DistributedSampler(ds)\n    dl = DataLoader(ds, sampler=s)\n"
        "    for ep in range(3):\n        for b in dl:\n            step(b)\n"
    )
    out = fixed(src, "TL403")
    assert "    for ep in range(3):\n        s.set_epoch(ep)\n" in out


def test_tl403_while_epoch_loop_has_no_fix(findings):
    src = (
        "from torch.utils.data import DataLoader, DistributedSampler\n"
        "dl = DataLoader(ds, sampler=DistributedSampler(ds))\nwhile not done:\n    for b in dl:\n        step(b)\n"
    )
    (f,) = findings(src, "TL403")
    assert f.line == 3 and f.fix is None


def test_tl403_conditional_set_epoch_through_the_loader(findings):
    src = (
        "from torch.utils.data import DataLoader, DistributedSampler\n"
        "loader = DataLoader(ds, sampler=DistributedSampler(ds))\n"
        "for epoch in range(3):\n    if args.distributed:\n        loader.sampler.set_epoch(epoch)\n"
        "    for b in loader:\n        step(b)\n"
    )
    (f,) = findings(src, "TL403")
    assert f.line == 4 and f.fix is None


def test_tl403_one_unconditional_set_epoch_is_enough(findings):
    src = (
        "from torch.utils.data import DataLoader, DistributedSampler\n"
        "sampler = DistributedSampler(ds)\nloader = DataLoader(ds, sampler=sampler)\n"
        "for epoch in range(3):\n    sampler.set_epoch(epoch)\n    if verbose:\n        sampler.set_epoch(epoch)\n"
        "    for b in loader:\n        step(b)\n"
    )
    assert findings(src, "TL403") == []


def test_tl403_same_name_in_another_function_is_another_sampler(findings):
    src = (
        "from torch.utils.data import DataLoader, DistributedSampler\n"
        "def build(ds):\n    sampler = DistributedSampler(ds)\n    return DataLoader(ds, sampler=sampler)\n"
        "def train(sampler, loader, distributed):\n    for epoch in range(3):\n"
        "        if distributed:\n            sampler.set_epoch(epoch)\n        for b in loader:\n            step(b)\n"
    )
    assert findings(src, "TL403") == []


def test_tl403_set_epoch_named_only_in_a_comment_is_no_call(findings):
    src = (
        "from torch.utils.data import DataLoader, DistributedSampler\n"
        "loader = DataLoader(ds, sampler=DistributedSampler(ds))\n"
        "for epoch in range(3):  # TODO: loader.sampler.set_epoch(epoch)\n    for b in loader:\n        step(b)\n"
    )
    assert [f.line for f in findings(src, "TL403")] == [3]
