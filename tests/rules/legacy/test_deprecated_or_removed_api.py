"""TL701 deprecated-or-removed-api beyond its embedded examples."""

from __future__ import annotations

import libcst as cst
import pytest

from torchlint.engine import fix_text, lint_text
from torchlint.registry import rules


@pytest.mark.parametrize(
    "call,replacement",
    [
        ("torch.qr(a, some=False)", 'torch.linalg.qr(a, mode="complete")'),
        ("torch.qr(a, True)", "torch.linalg.qr(a)"),
        ("torch.cholesky(a)", "torch.linalg.cholesky(a)"),
        ("torch.lu_solve(b, LU, piv)", "torch.linalg.lu_solve(LU, piv, b)"),
        ("torch.ger(u, v)", "torch.outer(u, v)"),
        ("torch.range(5)", "torch.arange(0, 6, dtype=torch.get_default_dtype())"),
        ("torch.range(10, 0, -2)", "torch.arange(10, -1, -2, dtype=torch.get_default_dtype())"),
        ("torch.range(0, 3, dtype=torch.int64)", "torch.arange(0, 4, dtype=torch.int64)"),
        ("torch.norm(x, p=1, dim=0, keepdim=True)", "torch.linalg.vector_norm(x, ord=1, dim=0, keepdim=True)"),
        ("torch.nn.UpsamplingNearest2d(scale_factor=2)", 'torch.nn.Upsample(scale_factor=2, mode="nearest")'),
        ("torch.nn.functional.upsample(x, size=4)", "torch.nn.functional.interpolate(x, size=4)"),
    ],
)
def test_tl701_mechanical_rewrites(call, replacement, fixed):
    out = fixed(f"import torch\ny = {call}\n", "TL701")
    assert out == f"import torch\ny = {replacement}\n"
    cst.parse_module(out)


@pytest.mark.parametrize(
    "call",
    [
        "torch.range(0, n)",
        "torch.norm(x, 'fro')",
        "torch.norm(x, dim=1, out=o)",
        "torch.qr(a, some=flag)",
        "torch.svd(a)",
    ],
)
def test_tl701_reports_but_does_not_guess(call, findings):
    (f,) = findings(f"import torch\ny = {call}\n", "TL701")
    assert f.fix is None


def test_tl701_no_fix_without_a_torch_import_to_spell_the_replacement(findings):
    (f,) = findings("from torch import qr\nq, r = qr(a)\n", "TL701")
    assert f.fix is None


@pytest.mark.parametrize(
    "src,deprecated_in",
    [
        ("import torch\ns = torch.cuda.amp.GradScaler()\n", "2.4"),
        ("from torch.cuda.amp import GradScaler\ns = GradScaler()\n", "2.4"),
        ("import torch\nwith torch.cuda.amp.autocast():\n    pass\n", "2.4"),
        ("import torch\nm = torch.jit.script(model)\n", "2.5"),
        ("import torch\nm = torch.jit.freeze(torch.jit.script(model).eval())\n", "2.5"),
        ("import torch\nx = torch.ones(2)\np = x.storage()\n", "2.0"),
        # FutureWarning since 2.1, when parametrizations.weight_norm came (vits pins torch==1.6.0)
        ("import torch\nconv = torch.nn.utils.weight_norm(torch.nn.Conv1d(2, 2, 3))\n", "2.1"),
        # documented deprecated since 1.7, but linalg.vector_norm, the advice, exists from 1.9 (nerf_pl: 1.4.0)
        ("import torch\nn = torch.norm(x, dim=-1)\n", "1.9"),
        ("import torch\nq, r = torch.qr(a)\n", "1.9"),
        ("import torch\nL = torch.lu(a)\n", "1.13"),
        ("from functorch import vmap\nys = vmap(f)(xs)\n", "2.0"),
    ],
)
def test_tl701_keyed_to_the_target_torch_version(src, deprecated_in):
    major, minor = deprecated_in.split(".")
    before = f"{major}.{int(minor) - 1}" if minor != "0" else "1.13"
    assert lint_text("m.py", src, [rules()["TL701"]], torch_version=before).findings == []
    assert lint_text("m.py", src, [rules()["TL701"]], torch_version=deprecated_in).findings != []


@pytest.mark.parametrize(
    "src,since",
    [
        ("import torch\nconv = torch.nn.utils.weight_norm(torch.nn.Conv1d(2, 2, 3))\n", "deprecated since 2.1"),
        ("import torch\nn = torch.norm(x, dim=-1)\n", "deprecated since 1.7"),
        ("import torch.distributed.launch\n", "deprecated since 1.10"),
    ],
)
def test_tl701_messages_name_the_release_that_deprecated_it(src, since):
    (finding,) = lint_text("m.py", src, [rules()["TL701"]], torch_version="2.13").findings
    assert since in finding.message


def test_tl701_a_project_pinned_below_the_deprecation_is_silent(tmp_path):
    """`torch==1.6.0` in requirements.txt: weight_norm was not deprecated there, its replacement did not exist."""
    src = "import torch\nconv = torch.nn.utils.weight_norm(torch.nn.Conv1d(2, 2, 3))\n"
    found = {}
    for name, requirement in (("pinned", "torch==1.6.0\n"), ("current", "torch>=2.1\n")):
        root = tmp_path / name
        (root / ".git").mkdir(parents=True)
        (root / "requirements.txt").write_text(requirement)
        (root / "model.py").write_text(src)
        found[name] = lint_text(str(root / "model.py"), src, [rules()["TL701"]]).findings
    assert not found["pinned"] and found["current"]


@pytest.mark.parametrize(
    "src",
    [
        "import torch.distributed.launch\n",
        "from torch.distributed import launch\n",
        "from torch.distributed.launch import launch\nlaunch(args)\n",
    ],
)
def test_tl701_distributed_launch_imports_once(src, findings):
    (f,) = findings(src, "TL701")
    assert f.line == 1 and "torchrun" in f.message


@pytest.mark.parametrize(
    "src",
    [
        "from torch.utils.data._utils.collate import default_collate\ny = default_collate(b)\n",
        "import torch\ny = torch.utils.data._utils.collate.default_convert(b)\n",
    ],
)
def test_tl701_a_private_alias_of_a_public_function_is_not_deprecated(src, findings):
    # the same function object as torch.utils.data.default_collate, no warning: "deprecated" would be false
    assert findings(src, "TL701") == []


def test_tl701_storage_and_launch_are_not_removed_api(findings):
    src = "import torch.distributed.launch\nimport torch\nx = torch.ones(2)\np = x.storage()\n"
    assert findings(src, "TL710") == []


def test_tl701_legacy_reduction_arguments_map_as_torch_does(fixed):
    head = "import torch.nn.functional as F\nfrom torch import nn\n"
    cases = {
        "nn.L1Loss(size_average=True)": 'nn.L1Loss(reduction="mean")',
        "nn.NLLLoss(weight=w, size_average=False)": 'nn.NLLLoss(weight=w, reduction="sum")',
        "nn.MSELoss(size_average=False, reduce=False)": 'nn.MSELoss(reduction="none")',
        "nn.BCELoss(reduce=True, size_average=None)": 'nn.BCELoss(reduction="mean")',
        "F.mse_loss(a, b, size_average=False)": 'F.mse_loss(a, b, reduction="sum")',
    }
    for old, new in cases.items():
        assert fixed(head + f"x = {old}\n", "TL701") == head + f"x = {new}\n", old


def test_tl701_legacy_reduction_without_a_literal_is_reported_unfixed(findings):
    src = "from torch import nn\nc = nn.MSELoss(size_average=avg)\nd = nn.MSELoss(reduce=False, reduction='sum')\n"
    got = findings(src, "TL701")
    assert [(f.line, f.fix) for f in got] == [(2, None), (3, None)]
    assert 'reduction="none"' in got[1].message


def test_tl701_legacy_reduction_only_on_torch_losses(findings):
    src = "from torch import nn\nimport numpy as np\nm = nn.Linear(2, 2)\ny = np.add.reduce(x)\nz = my_loss(a, size_average=False)\n"
    assert findings(src, "TL701") == []


def _fix_24(src: str) -> str:
    return fix_text("m.py", src, [rules()["TL701"]], torch_version="2.4").text


@pytest.mark.parametrize(
    "call,replacement",
    [
        # issue 27: the keyword arguments were joined with their own commas: `x, scale_factor=2, , mode=...`
        (
            'F.upsample(x, scale_factor=2, mode="nearest")',
            'torch.nn.functional.interpolate(x, scale_factor=2, mode="nearest")',
        ),
        ("F.upsample(x, None, 2,)", "torch.nn.functional.interpolate(x, None, 2,)"),
        ("F.upsample(x,  # input\n    size=4)", "torch.nn.functional.interpolate(x,  # input\n    size=4)"),
        # issue 27: a positional `enabled` landed in `dtype`
        ("torch.cuda.amp.autocast(flag)", 'torch.amp.autocast("cuda", enabled=flag)'),
        (
            "torch.cuda.amp.autocast(True, torch.bfloat16)",
            'torch.amp.autocast("cuda", enabled=True, dtype=torch.bfloat16)',
        ),
        ("torch.cuda.amp.autocast()", 'torch.amp.autocast("cuda")'),
        ("torch.cuda.amp.GradScaler(2.0**16, 2.0)", 'torch.amp.GradScaler("cuda", 2.0**16, 2.0)'),
        ("torch.nn.UpsamplingBilinear2d(None, 2)", 'torch.nn.Upsample(None, 2, mode="bilinear", align_corners=True)'),
        ("torch.lu(A, False)", "torch.linalg.lu_factor(A, pivot=False)"),
        ("functorch.vjp(f, x, y, has_aux=True)", "torch.func.vjp(f, x, y, has_aux=True)"),  # into `*primals`
    ],
)
def test_tl701_migrations_bind_arguments_by_name(call, replacement):
    src = f"import torch\nimport functorch\nimport torch.nn.functional as F\ny = {call}\n"
    out = _fix_24(src)
    assert out == f"import torch\nimport functorch\nimport torch.nn.functional as F\ny = {replacement}\n"


@pytest.mark.parametrize(
    "call",
    [
        "torch.cuda.amp.autocast(*flags)",
        "torch.cuda.amp.autocast(**amp_kwargs)",
        "torch.cuda.amp.autocast(True, torch.float16, True, 4)",  # more positionals than parameters
        "torch.lu(A, get_infos=True)",  # no place in the new signature
        "torch.utils._pytree._register_pytree_node(C, flat, unflat, to_str)",
        "F.upsample(x, scale=2)",  # a keyword the old signature lacks
    ],
)
def test_tl701_no_safe_migration_when_the_binding_is_not_certain(call, findings):
    src = f"import torch\nimport torch.nn.functional as F\ny = {call}\n"
    (f,) = lint_text("m.py", src, [rules()["TL701"]], torch_version="2.4").findings
    assert f.fix is None


def test_tl701_linalg_rewrites_bind_arguments_by_name(fixed):
    # issue 27 item 2: the arguments are bound to the old signature (_signatures.py), so a positional
    # `dim` or keyword spellings are rewritten as well as the positional ones (they were left unfixed)
    src = "import torch\nn = torch.norm(b, 2, 1)\nx = torch.lu_solve(b, LU_data=lu, LU_pivots=piv)\n"
    assert fixed(src, "TL701") == (
        "import torch\nn = torch.linalg.vector_norm(b, ord=2, dim=1)\nx = torch.linalg.lu_solve(lu, piv, b)\n"
    )
    for unbound in ("torch.norm(b, 2, 1, False, None, torch.float64)", "torch.qr(a, out=qr)", "torch.norm(*args)"):
        assert fixed(f"import torch\ny = {unbound}\n", "TL701") == f"import torch\ny = {unbound}\n", unbound


def test_tl701_a_function_the_program_defines_is_not_the_library_s():
    """A notebook imports v2's ToTensor, then defines its own `ToTensor()` (the recommended replacement)."""
    src = (
        "import torch\nfrom torchvision.transforms.v2 import Compose, ToTensor, ToImage, ToDtype\n\n"
        "def ToTensor():\n    return Compose([ToImage(), ToDtype(torch.float32, scale=True)])\n\n"
        "tensorizer = ToTensor()\n"
    )
    assert lint_text("m.py", src, [rules()["TL701"]], torch_version="2.13").findings == []
    imported_only = src.replace("def ToTensor", "def own_to_tensor")
    assert lint_text("m.py", imported_only, [rules()["TL701"]], torch_version="2.13").findings != []
