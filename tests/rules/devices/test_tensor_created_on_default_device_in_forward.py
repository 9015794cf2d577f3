"""TL304 tensor-created-on-default-device-in-forward beyond its embedded examples."""

from __future__ import annotations

from torchlint.engine import lint_text
from torchlint.registry import rules

FORWARD = "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def forward(self, x):\n{body}"


def test_tl304_later_relocation_or_index_use_is_fine(findings):
    body = "        idx = torch.randperm(x.size(0))\n        pos = torch.arange(8)\n        pos = pos.to(x.device)\n        return x[idx] + pos\n"
    assert findings(FORWARD.format(body=body), "TL304") == []


def test_tl304_arithmetic_and_setitem_uses_are_followed(findings):
    body = (
        "        n = torch.ones(x.shape[0]) * 4 + 1\n        drop = torch.randint(1, 5, (x.shape[0],))\n"
        "        n[:2] = drop[:2]\n        n = n.to(x.device)\n        return x * n\n"
    )
    assert findings(FORWARD.format(body=body), "TL304") == []


def test_tl304_no_fix_for_optional_input(findings):
    src = "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def forward(self, x=None):\n        return torch.zeros(3)\n"
    (f,) = findings(src, "TL304")
    assert f.fix is None


CPU_SCRIPT = (
    "import torch\nfrom torch import nn\nclass Seq(nn.Module):\n    def forward(self, x):\n"
    "        h = torch.zeros(x.size(0), 51, dtype=torch.double)\n        return x + h\n"
    "model = Seq()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "for step in range(10):\n    opt.zero_grad()\n    model(torch.randn(4, 51)).sum().backward()\n    opt.step()\n"
    "    plt.xlabel('x')\n"
)


def test_tl304_silent_in_a_program_that_never_names_an_accelerator(tmp_path):
    (tmp_path / ".git").mkdir()
    script = tmp_path / "train.py"
    script.write_text(CPU_SCRIPT)
    assert lint_text(str(script), CPU_SCRIPT, [rules()["TL304"]]).findings == []
    moved = CPU_SCRIPT.replace("model = Seq()", "model = Seq().to('cuda')")
    assert [f.line for f in lint_text(str(script), moved, [rules()["TL304"]]).findings] == [5]


def test_tl304_a_cpu_only_script_that_another_file_imports_is_judged_with_its_callers(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "train.py").write_text(CPU_SCRIPT)
    (tmp_path / "gpu.py").write_text("from train import Seq\nmodel = Seq().cuda()\n")
    found = lint_text(str(tmp_path / "train.py"), CPU_SCRIPT, [rules()["TL304"]]).findings
    assert [f.line for f in found] == [5]


_TOKENS = """\
import torch
from torch import nn
class Noise(nn.Module):
    def forward(self, {param}):
        {use}
        return torch.randint(0, 10, (len(x),)) + self.bias
"""


def test_tl304_no_device_fix_when_the_input_is_not_proven_a_tensor(findings):
    # issue 27: `device=x.device` where `x` is a list: AttributeError
    (f,) = findings(_TOKENS.format(param="x", use="n = len(x)"), "TL304")
    assert f.fix is None


def test_tl304_device_fix_when_the_input_is_proven_a_tensor(findings):
    for param, use in (("x", "n = x.size(0)"), ("x: torch.Tensor", "n = 1")):
        (f,) = findings(_TOKENS.format(param=param, use=use), "TL304")
        assert f.fix is not None, param


def test_tl304_silent_on_tensors_used_only_as_slice_bounds(findings):
    # issue 27: a device added to slice bounds adds host syncs and changes nothing
    src = (
        "import torch\nfrom torch import nn\nclass Crop(nn.Module):\n    def forward(self, x):\n"
        "        k = torch.randint(1, 4, ())\n        return x[:, : torch.randint(1, 4, ())] + x[:, :k].sum()\n"
    )
    assert findings(src, "TL304") == []


def test_tl304_a_tensor_that_only_becomes_slice_bounds_is_silent(findings):
    # swav's multi-crop forward: the widths tensor feeds unique_consecutive/cumsum whose results slice a list
    src = (
        "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def forward(self, inputs):\n"
        "        crops = torch.cumsum(torch.unique_consecutive(torch.tensor([i.shape[-1] for i in inputs]), "
        "return_counts=True)[1], 0)\n"
        "        start = 0\n        for end in crops:\n            out = self.body(torch.cat(inputs[start:end]))\n"
        "            start = end\n        return out\n"
    )
    assert findings(src, "TL304") == []
    # the same tensor added to an activation is a device operand
    mixed = src.replace("return out\n", "return out + torch.cumsum(torch.tensor([1, 2]), 0)\n")
    assert [f.line for f in findings(mixed, "TL304")] == [10]


SETS_DEFAULT = (
    "import torch\nfrom torch import nn\nclass Mem(nn.Module):\n    def forward(self, x):\n"
    "        steps = torch.arange(x.size(1))\n        return x + steps\n"
    "def main(cuda):\n    device = torch.device('cuda' if cuda else 'cpu')\n"
    "    if cuda:\n        torch.set_default_device(device)\n    model = Mem().to(device)\n"
)


def test_tl304_silent_where_the_program_sets_the_default_device(tmp_path):
    """`torch.set_default_device(device)` anywhere in the program: factories allocate there, not on the CPU."""
    (tmp_path / ".git").mkdir()
    script = tmp_path / "train.py"
    script.write_text(SETS_DEFAULT)
    assert lint_text(str(script), SETS_DEFAULT, [rules()["TL304"]]).findings == []
    unset = SETS_DEFAULT.replace("torch.set_default_device(device)", "print(device)")
    script.write_text(unset)
    assert [f.line for f in lint_text(str(script), unset, [rules()["TL304"]]).findings] == [5]


def test_tl304_a_module_whose_importer_sets_the_default_device(tmp_path):
    (tmp_path / ".git").mkdir()
    library = SETS_DEFAULT.split("def main")[0]
    (tmp_path / "layers.py").write_text(library)
    (tmp_path / "train.py").write_text(
        "import torch\nfrom layers import Mem\ntorch.set_default_device('cuda')\nmodel = Mem().cuda()\n"
    )
    assert lint_text(str(tmp_path / "layers.py"), library, [rules()["TL304"]]).findings == []


def test_tl304_an_index_computed_from_the_factory_alone_is_no_device_operand(findings):
    body = (
        "        rows = torch.arange(x.size(0))[..., None]\n        scores = torch.randn(x.size(0), x.size(1))\n"
        "        keep = scores.topk(x.size(1) // 2, dim=-1).indices\n        return x[rows, keep]\n"
    )
    assert findings(FORWARD.format(body=body), "TL304") == []


HELPERS = (
    "import torch\n\ndef gated(a, b, n_channels):\n    n = n_channels[0]\n    act = a + b\n"
    "    return torch.tanh(act[:, :n]) * torch.sigmoid(act[:, n:])\n\n"
    "def scaled(a, b, scale):\n    return (a + b) * scale\n"
)
LAYER = (
    "import torch\nfrom torch import nn\nimport helpers\n\nclass WN(nn.Module):\n    def forward(self, x, g):\n"
    "        width = torch.IntTensor([self.hidden])\n        return helpers.{fn}(x, g, width)\n"
)


def test_tl304_a_tensor_the_called_function_only_slices_with_is_a_host_value(tmp_path):
    """Across files: the helper reads its parameter only as `n_channels[0]`, a slice bound (vits' WaveNet)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "helpers.py").write_text(HELPERS)
    found = {}
    for fn in ("gated", "scaled"):
        src = LAYER.format(fn=fn)
        (tmp_path / "layers.py").write_text(src)
        found[fn] = [f.line for f in lint_text(str(tmp_path / "layers.py"), src, [rules()["TL304"]]).findings]
    assert found == {"gated": [], "scaled": [7]}
