"""TL203 forward-called-directly beyond its embedded examples."""

from __future__ import annotations

import json

import pytest


def test_tl203_ignores_explicit_base_class_calls_and_unknown_receivers(findings):
    src = "import torch\nclass A(torch.nn.Module):\n    def forward(self, x):\n        return torch.nn.Module.forward(self, x)\nout = thing.forward(1)\n"
    assert findings(src, "TL203") == []


PLAIN = "from torch import nn\nnet = nn.Linear(2, 2)\n{extra}out = net.forward(x)\n{after}"


def _severity(findings, src):
    (f,) = findings(src, "TL203")
    return f.severity.value


def test_tl203_is_info_when_nothing_relies_on_call(findings):
    assert _severity(findings, PLAIN.format(extra="", after="")) == "info"


def test_tl203_hook_on_another_module_keeps_it_info(findings):
    src = PLAIN.format(extra="other = nn.Linear(2, 2)\nother.register_forward_hook(show)\n", after="")
    assert _severity(findings, src) == "info"


@pytest.mark.parametrize(
    "extra,after",
    [
        ("net.register_forward_hook(show)\n", ""),
        ("", "net.register_full_backward_hook(show)\n"),  # registered after the call: still the same program
        ("", "h = net.register_forward_pre_hook(show)\n"),
        ("for m in net.modules():\n    m.register_forward_hook(show)\n", ""),
        ("import torch\ntorch.nn.modules.module.register_module_forward_hook(show)\n", ""),
        ("import torch\nfast = torch.compile(net)\n", ""),
        ("from torch.nn.parallel import DistributedDataParallel as DDP\nddp = DDP(net)\n", ""),
        ("from torch.distributed.fsdp import fully_shard\nfully_shard(net)\n", ""),
        ("from accelerate import Accelerator\naccelerator = Accelerator()\nnet = accelerator.prepare(net)\n", ""),
    ],
)
def test_tl203_is_a_warning_when_hooks_or_wrappers_rely_on_call(extra, after, findings):
    assert _severity(findings, PLAIN.format(extra=extra, after=after)) == "warning"


def test_tl203_user_severity_setting_overrides_the_per_finding_severity(tmp_path, run_cli):
    # TL203 is opt-in (measured value): selected here, its severity set by the user
    (tmp_path / "pyproject.toml").write_text(
        '[tool.torchlint]\nextend-select = ["TL203"]\nseverity = { TL203 = "error" }\n'
    )
    (tmp_path / "m.py").write_text(PLAIN.format(extra="", after=""))
    out = json.loads(run_cli("check", "--output-format", "json", tmp_path / "m.py").stdout)
    assert [(f["code"], f["severity"]) for f in out] == [("TL203", "error")]


@pytest.mark.parametrize("where", ["module", "function"])
def test_tl203_a_ddp_object_does_its_syncing_in_its_own_forward(where, findings):
    # `model = DDP(model)`: the receiver is the wrapper, whose forward runs _pre_forward; the wrapped module
    # of the same name is another object, so nothing but `__call__` itself is skipped
    body = (
        "model = Net()\nmodel = torch.nn.parallel.DistributedDataParallel(model, device_ids=[0])\n"
        "loss = model.forward(x)\n"
    )
    if where == "function":
        body = "def main():\n" + "".join(f"    {line}\n" for line in body.splitlines())
    src = "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    pass\n" + body
    assert _severity(findings, src) == "info"
    # a hook on the DDP object is skipped, though
    hooked = src + ("    " if where == "function" else "") + "model.register_forward_hook(show)\n"
    assert _severity(findings, hooked) == "warning"
