"""TL502 dataloader-reiterated-for-length beyond its embedded examples."""

from __future__ import annotations


def test_tl502_loader_from_a_parameter_the_call_sites_prove(findings):
    src = (
        "from torch.utils.data import DataLoader\n"
        "def steps(loader):\n    return len(list(loader))\n"
        "steps(DataLoader(ds))\n"
    )
    assert [f.line for f in findings(src, "TL502")] == [3]


def test_tl502_parameter_without_evidence_is_silent(findings):
    assert findings("def steps(loader):\n    return sum(1 for _ in loader)\n", "TL502") == []


def test_tl502_sum_of_other_constants_is_silent(findings):
    src = "from torch.utils.data import DataLoader\nloader = DataLoader(ds)\nn = sum(2 for _ in loader)\n"
    assert findings(src, "TL502") == []


def test_tl502_nested_comprehension_is_silent(findings):
    src = "from torch.utils.data import DataLoader\nloader = DataLoader(ds)\nn = len([x for b in loader for x in b])\n"
    assert findings(src, "TL502") == []


def test_tl502_fix_is_unsafe(findings):
    from torchlint.findings import Applicability

    src = "from torch.utils.data import DataLoader\nloader = DataLoader(ds)\nn = len(tuple(loader))\n"
    [f] = findings(src, "TL502")
    assert f.fix is not None and f.fix.applicability is Applicability.UNSAFE
