"""TL704 torchvision-pretrained-argument: torchvision model built with pretrained="""

from __future__ import annotations

import re

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.call_binding import bind, signature
from torchlint.engine.core.callargs import is_name, string_value
from torchlint.engine.rule import SAFE, UNSAFE, Invalid, Replace, Rule, fix
from torchlint.engine.semantic.version_guards import paired_torchvision
from torchlint.findings import Severity

from ._signatures import CLASSIFIER, TORCH, TORCHVISION, TORCHVISION_WEIGHTS

_UNKNOWN = (-1, -1)  # a pinned tag that names no release we can read: its builders' signature is unknown
_BRANCHES = frozenset({"main", "master", "nightly"})
_RELEASE = re.compile(r"v?(\d+)\.(\d+)")


def _hub_release(repo: str) -> tuple[int, int] | None:
    """The torchvision release a `torch.hub.load` repo pins (`pytorch/vision:v0.9.0`): None for the
    current one (no tag, or a development branch), _UNKNOWN for a tag that is no release."""
    _, colon, tag = repo.partition(":")
    if not colon or tag in _BRANCHES:
        return None
    m = _RELEASE.match(tag.removeprefix("release/"))
    return (int(m.group(1)), int(m.group(2))) if m else _UNKNOWN


def _builder_args(call: cst.Call, hub: bool) -> cst.Call | None:
    """`call` with only the arguments the builder gets: `torch.hub.load` keeps its own (bound to its
    signature) and passes the rest on. None when that binding is not certain."""
    if not hub:
        return call
    load = signature(TORCH["torch.hub.load"])
    bound = bind(call, load)
    if bound is None:
        return None
    own = [a for name, a in bound.items() if load.param(name) is not None]
    return call.with_changes(args=[a for a in call.args if not any(a is o for o in own)])


def _binds(call: cst.Call | None, builder: str | None) -> bool:
    """Whether the builder's arguments in `call` bind for certain to its signature since torchvision 0.13
    (data: _signatures.TORCHVISION, else CLASSIFIER for `torchvision.models.<name>`)."""
    if builder is None:
        return False
    known = TORCHVISION.get(builder) or (CLASSIFIER if builder.count(".") == 2 else None)
    return call is not None and known is not None and bind(call, signature(known)) is not None


class TorchvisionPretrained(Rule):
    code = "TL704"
    analyses = frozenset({Analysis.TORCH_VERSION, Analysis.VERSION_GUARDS})
    requires = ("pretrained",)
    version_sensitive = True  # `if torchvision.__version__ < "0.13":` runs where `pretrained=` is the API
    name = "torchvision-pretrained-argument"
    message = "`{arg}=` of torchvision model builders is deprecated (since torchvision 0.13; it warns and may be removed); use `{new}=`{hint}"
    severity = Severity.WARNING
    category = "modernisation"
    summary = "torchvision model built with pretrained="
    what = (
        "Flags torchvision model builders (and `torch.hub.load('pytorch/vision', ...)`) called with `pretrained=` / "
        "`pretrained_backbone=`, except where every torch the project admits pairs with a torchvision before 0.13 "
        "(`torch==1.7.1` or `torch<1.12` in requirements.txt, or `torch-version` set below 1.12) and in a branch only torchvision releases before 0.13 run "
        '(`if version.parse(torchvision.__version__) < version.parse("0.13"):`, read at the torchvision released '
        "with the target torch)."
    )
    why = (
        "torchvision 0.13 replaced the boolean with a `weights=` enum that names exactly which checkpoint "
        "(and preprocessing) is used. The boolean still works but warns that it may be removed, and it "
        "cannot say which weights you get when a model has several."
    )
    example = "import torchvision\n\nmodel = torchvision.models.resnet50(pretrained=True)\n"
    fix_example = 'import torchvision\n\nmodel = torchvision.models.resnet50(weights="DEFAULT")\n'
    fix_safety = (
        'Unsafe when a `True` is rewritten: `pretrained=True` becomes `weights="DEFAULT"`, the best available '
        "weights — for some models newer than the ones `pretrained=True` loaded, so results may change (use "
        'e.g. `"IMAGENET1K_V1"` to reproduce old results). Safe when only `False` values are rewritten: '
        "`pretrained=False` becomes `weights=None`, the same untrained model, when every argument binds for certain "
        "to the builder's signature (kept as data: a `torchvision.models` classifier's, or a listed subpackage "
        "builder's; no `*args` / `**kwargs`; a `torch.hub.load` model named by a literal): unsafe otherwise. "
        "Non-literal values are left to you. "
        "A `torch.hub.load` pinned to a release before torchvision 0.13 (`'pytorch/vision:v0.9.0'`) is not "
        "reported: `pretrained=` is its API and it has no `weights=`; one pinned to a tag that names no release "
        "gets no fix."
    )
    VALID = [
        'import torchvision\nm = torchvision.models.resnet50(weights="DEFAULT")\n',
        "import timm\nm = timm.create_model('resnet50', pretrained=True)\n",
        "from torchvision.models import ResNet50_Weights\nw = ResNet50_Weights.DEFAULT\n",
        # the branch for releases before 0.13, where `pretrained=` is the API (pytorch-ddpm's inception.py)
        "import torchvision\nfrom packaging import version\n"
        "TV = version.parse(torchvision.__version__)\n"
        'if TV < version.parse("0.13.0"):\n'
        "    m = torchvision.models.inception_v3(pretrained=True)\n"
        "else:\n"
        "    m = torchvision.models.inception_v3(weights=torchvision.models.Inception_V3_Weights.IMAGENET1K_V1)\n",
        "import torch\nm = torch.hub.load('pytorch/vision:v0.9.0', 'mobilenet_v2', pretrained=False)\n",
    ]
    INVALID = [
        Invalid(
            "from torchvision.models.detection import fasterrcnn_resnet50_fpn\n"
            "m = fasterrcnn_resnet50_fpn(pretrained=False, pretrained_backbone=True)\n",
            line=2,
            fixed="from torchvision.models.detection import fasterrcnn_resnet50_fpn\n"
            'm = fasterrcnn_resnet50_fpn(weights=None, weights_backbone="DEFAULT")\n',
        ),
        Invalid(
            "import torchvision\nm = torchvision.models.resnet18(pretrained=False)\n",
            line=2,
            fixed="import torchvision\nm = torchvision.models.resnet18(weights=None)\n",
        ),
        Invalid("import torch\nm = torch.hub.load('pytorch/vision', 'resnet18', pretrained=flag)\n", line=2),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        q = self.ctx.qualname(node.func) or ""
        if q.startswith("torchvision.models."):
            if not q.rpartition(".")[2][:1].islower():
                return
        elif not (q == "torch.hub.load" and node.args and "pytorch/vision" in (string_value(node.args[0].value) or "")):
            return
        release = _hub_release(string_value(node.args[0].value) or "") if q == "torch.hub.load" else None
        newest = self.ctx.torch_version.ceiling
        if release is None and newest is not None and paired_torchvision(newest) < TORCHVISION_WEIGHTS:
            return  # every torchvision the project admits (torch==1.7.1: 0.8) predates `weights=`
        if release not in (None, _UNKNOWN) and release < TORCHVISION_WEIGHTS:
            return  # a pinned release before `weights=`: `pretrained=` is its API
        found = [
            a for a in node.args if a.keyword is not None and a.keyword.value in ("pretrained", "pretrained_backbone")
        ]
        if not found:
            return
        new_args = list(node.args)
        fixable = True
        loads_weights = False  # "DEFAULT" may name newer weights than `pretrained=True` loaded
        for a in found:
            value = "None" if is_name(a.value, "False") else '"DEFAULT"' if is_name(a.value, "True") else None
            if value is None:
                fixable = False
                break
            loads_weights = loads_weights or value != "None"
            new_name = cst.ensure_type(a.keyword, cst.Name).value.replace("pretrained", "weights")
            new_args[new_args.index(a)] = a.with_changes(keyword=cst.Name(new_name), value=cst.parse_expression(value))
        hub = q == "torch.hub.load"
        name = string_value(node.args[1].value) if hub and len(node.args) > 1 else None
        builder = q if not hub else f"torchvision.models.{name}" if name and name.isidentifier() else None
        rewritten = node.with_changes(args=new_args)
        certain = _binds(_builder_args(rewritten, hub), builder)
        first = cst.ensure_type(found[0].keyword, cst.Name).value
        new = first.replace("pretrained", "weights")
        hint = (
            "" if fixable else f' (e.g. `{new}="DEFAULT" if {self.ctx.module.code_for_node(found[0].value)} else None`)'
        )
        edit = (
            fix(
                "Use `weights=`",
                Replace(node, rewritten),
                applicability=SAFE if certain and not loads_weights else UNSAFE,
                risk="may load newer weights" if loads_weights else "arguments not bound to the builder's signature",
            )
            if fixable and release != _UNKNOWN
            else None
        )
        self.report(node, self.message.format(arg=first, new=new, hint=hint), fix=edit)
