"""TL712 autocast-without-device-type beyond its embedded examples."""

from __future__ import annotations

from torchlint.findings import Applicability


def _applicability(findings, src):
    (f,) = findings(src, "TL712")
    return f.fix.applicability


def test_tl712_fix_is_safe_only_when_every_move_is_to_cuda(findings):
    body = "with torch.autocast(enabled=True):\n    y = model(x)\n"
    on_cuda = 'import torch\ndevice = torch.device("cuda:0")\nmodel.to(device)\nx = x.cuda()\n' + body
    assert _applicability(findings, on_cuda) is Applicability.SAFE
    chosen = 'import torch\ndevice = "cuda" if torch.cuda.is_available() else "cpu"\nmodel.to(device)\n' + body
    assert _applicability(findings, chosen) is Applicability.DISPLAY
    mixed = 'import torch\nmodel.to("cuda")\nx = x.to("cpu")\n' + body
    assert _applicability(findings, mixed) is Applicability.DISPLAY
    assert _applicability(findings, "import torch\n" + body) is Applicability.DISPLAY


def test_tl712_decorator_and_aliases(findings):
    src = "from torch import autocast\n@autocast(enabled=True)\ndef f(x):\n    return x\n"
    assert [f.line for f in findings(src, "TL712")] == [2]
    assert findings("import torch\nwith torch.autocast(device_type='cpu'):\n    pass\n", "TL712") == []
