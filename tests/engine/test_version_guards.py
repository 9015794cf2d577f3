"""Version guards (engine/semantic/version_guards.py): branches that never run on the target torch."""

from __future__ import annotations

import libcst as cst
import pytest

from torchlint.engine.runner import lint_text
from torchlint.engine.semantic.names import Imports
from torchlint.engine.semantic.version_guards import VersionGuards, module_assignments
from torchlint.registry import rules

HEAD = "import torch\nfrom packaging import version\nfrom packaging.version import Version\nfrom distutils.version import LooseVersion\n"


def _holds(test: str, target=(2, 4), prelude: str = "") -> bool | None:
    module = cst.parse_module(HEAD + prelude + f"ok = {test}\n")
    imports = Imports(module)
    guards = VersionGuards(target, imports.qualname, module_assignments(module))
    value = module_assignments(module)["ok"]
    return guards.holds(value)


@pytest.mark.parametrize(
    "test,expected",
    [
        ('version.parse(torch.__version__) < version.parse("1.11")', False),
        ('version.parse(torch.__version__) >= version.parse("2.0")', True),
        ('Version(torch.__version__) >= Version("2.5")', False),
        ('LooseVersion(torch.__version__) > LooseVersion("1.8.0")', True),
        ('torch.__version__ >= "2"', True),
        ('"1.13" <= torch.__version__', True),  # the version on the right
        ('not torch.__version__ < "2.0"', True),
        ('torch.__version__ < "2.0" or flag', None),  # unknown stays unknown
        ('torch.__version__ < "2.0" and flag', False),
        ('version.parse(torch.__version__) < version.parse("2.4.1")', None),  # inside the target series
        ("hasattr(torch, 'compile')", None),
        ("sys.version_info >= (3, 8)", None),
    ],
)
def test_guards_evaluate_at_the_target(test, expected):
    assert _holds(test) is expected


def test_a_flag_assigned_from_the_version():
    assert _holds("not TORCH_GE_1_11", prelude='TORCH_GE_1_11 = torch.__version__ >= "1.11"\n') is False


CODE = (
    HEAD + "from torch.utils.checkpoint import checkpoint\n"
    'if version.parse(torch.__version__) < version.parse("1.11"):\n'
    "    h = checkpoint(block, x)\n"
    "elif flag:\n"
    "    h = checkpoint(block, x)\n"
    "else:\n"
    "    h = checkpoint(block, x)\n"
)


def test_version_sensitive_findings_are_dropped_only_where_the_target_never_runs():
    found = lint_text("t.py", CODE, [rules()["TL705"]], torch_version="2.4").findings
    assert [f.line for f in found] == [9, 11]  # the `< 1.11` branch is dead on 2.4
    # targeting 1.10 the branch runs and the others, behind it, never do
    found = lint_text("t.py", CODE, [rules()["TL705"]], torch_version="1.10").findings
    assert [f.line for f in found] == [7]


@pytest.mark.parametrize(
    "torch,torchvision", [((1, 0), (0, 2)), ((1, 8), (0, 9)), ((1, 13), (0, 14)), ((2, 0), (0, 15)), ((2, 13), (0, 28))]
)
def test_torchvision_releases_pair_with_torch_releases(torch, torchvision):
    from torchlint.engine.semantic.version_guards import paired_torchvision

    assert paired_torchvision(torch) == torchvision


def test_a_torchvision_version_guard_is_read_at_the_paired_release():
    code = (
        "import torchvision\nfrom packaging import version\nTV = version.parse(torchvision.__version__)\n"
        'if TV < version.parse("0.13.0"):\n    m = torchvision.models.resnet18(pretrained=True)\n'
    )
    tl704 = [rules()["TL704"]]
    assert not lint_text("t.py", code, tl704, torch_version="2.4").findings  # torchvision 0.19 never runs it
    assert lint_text("t.py", code.replace("< version", "> version"), tl704, torch_version="2.4").findings
    assert lint_text("t.py", code.replace("< version", ">= version"), tl704, torch_version="1.13").findings


def test_tl704_is_silent_where_the_target_torch_s_torchvision_predates_weights():
    """torch==1.7.1 pins torchvision 0.8, where `pretrained=` is the API: nothing is deprecated there."""
    code = "import torchvision\nm = torchvision.models.resnet18(pretrained=True)\n"
    tl704 = [rules()["TL704"]]
    assert not lint_text("t.py", code, tl704, torch_version="1.7").findings
    assert lint_text("t.py", code, tl704, torch_version="1.12").findings  # torchvision 0.13 deprecated it
