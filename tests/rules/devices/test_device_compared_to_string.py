"""TL308 device-compared-to-string beyond its embedded examples."""

from __future__ import annotations


def test_tl308_string_on_the_left_is_fixed_on_the_device_side(fixed):
    src = 'import torch\ndevice = torch.device("cpu")\nslow = "cpu" == device\n'
    assert fixed(src, "TL308").endswith('slow = "cpu" == device.type\n')


def test_tl308_not_in_is_always_true(findings):
    src = 'import torch\nd = torch.device("mps")\nif d not in ["cuda"]:\n    pass\n'
    (f,) = findings(src, "TL308")
    assert "always True" in f.message


def test_tl308_device_reassigned_under_a_branch_is_unknown(findings):
    src = 'import torch\ndevice = torch.device("cuda")\nif flag:\n    device = "cpu"\nuse = device == "cuda"\n'
    assert findings(src, "TL308") == []


def test_tl308_a_non_device_string_is_not_a_device_comparison(findings):
    src = 'import torch\ndevice = torch.device("cuda")\nok = device == "auto"\n'
    assert findings(src, "TL308") == []
