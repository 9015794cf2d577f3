"""TL602 unchecked-non-strict-load: load_state_dict(strict=False) whose missing/unexpected keys are ignored"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.callargs import get_arg, is_name
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.rule import SAFE, InsertAfter, Invalid, Replace, Rule, fix
from torchlint.engine.semantic.kinds import Kind
from torchlint.findings import Severity


class UncheckedNonStrictLoad(Rule):
    code = "TL602"
    analyses = frozenset(
        {Analysis.CALL_SITES, Analysis.KINDS, Analysis.NAME_NODES, Analysis.OWN_SUMMARY, Analysis.SCOPES}
    )
    requires = ("load_state_dict",)
    name = "unchecked-non-strict-load"
    message = (
        "`load_state_dict(..., strict=False)` result is discarded: missing and unexpected keys (a renamed "
        "layer, a `module.` prefix) pass silently and the model keeps random weights; bind and check the result"
    )
    severity = Severity.WARNING
    category = "correctness"
    opt_in = (
        "On 12 public repositories it was not tuned on (bench/realworld, unseen at 2026-12-03), 1 of its 19 "
        "findings was right: the others load partial checkpoints on purpose (adapter or LoRA weights beside a "
        "base model, a replaced head), where `strict=False` is required. Earlier unseen code showed the same, "
        "and state dicts built from the module's own parameters."
    )
    summary = "load_state_dict(strict=False) whose missing/unexpected keys are ignored"
    what = (
        "Flags `model.load_state_dict(sd, strict=False)` when the returned `(missing_keys, unexpected_keys)` "
        "is thrown away or bound to a name that is never read."
    )
    why = (
        "`strict=False` is meant for deliberate partial loads. With the result ignored, a checkpoint whose "
        "keys do not match at all (wrapped in `module.`, renamed layers, a different architecture) loads "
        "*nothing* and reports success; the model then trains or evaluates from random initialisation."
    )
    example = """\
import torch

model.load_state_dict(torch.load("ckpt.pt", weights_only=True), strict=False)
"""
    fix_example = """\
import torch

missing, unexpected = model.load_state_dict(torch.load("ckpt.pt", weights_only=True), strict=False)
if missing or unexpected:
    print(f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}")
"""
    fix_safety = (
        "Safe for `nn.Module.load_state_dict`, which returns `(missing_keys, unexpected_keys)`; offered only "
        "when the receiver is known to be a module. A custom override that returns None would fail to unpack."
    )
    VALID = [
        """\
missing, unexpected = model.load_state_dict(sd, strict=False)
assert not unexpected, unexpected
""",
        """\
result = model.load_state_dict(sd, strict=False)
logger.info("loaded: %s", result)
""",
        "model.load_state_dict(sd)\n",
        "print(model.load_state_dict(sd, strict=False))\n",
    ]
    INVALID = [
        Invalid(
            "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.load_state_dict(sd, strict=False)\n",
            line=3,
            fixed=(
                "import torch\nmodel = torch.nn.Linear(2, 2)\n"
                "missing, unexpected = model.load_state_dict(sd, strict=False)\n"
                "if missing or unexpected:\n"
                '    print(f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}")\n'
            ),
        ),
        Invalid("def f(net, sd):\n    res = net.load_state_dict(sd, strict=False)\n    return net\n", line=2),
    ]

    def _non_strict(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """What a `load_state_dict(..., strict=False)` call loads into, else None."""
        if not isinstance(expr, cst.Call) or not isinstance(expr.func, cst.Attribute):
            return None
        if expr.func.attr.value != "load_state_dict":
            return None
        strict = get_arg(expr, "strict", 1)
        return expr.func.value if strict is not None and is_name(strict.value, "False") else None

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        for small in node.body:
            if isinstance(small, cst.Expr) and (loaded := self._non_strict(small.value)) is not None:
                call = small.value
                edit = None
                if len(node.body) == 1 and self.ctx.kind(loaded) & Kind.MODEL:
                    code = self.ctx.module.code_for_node(call)
                    edit = fix(
                        "Bind and report the missing/unexpected keys",
                        Replace(small, f"missing, unexpected = {code}"),
                        InsertAfter(
                            node,
                            "if missing or unexpected:\n"
                            '    print(f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}")',
                        ),
                        applicability=SAFE,
                    )
                self.report(call, fix=edit)
            elif isinstance(small, cst.Assign) and self._non_strict(small.value) is not None:
                names = {
                    n.value for t in small.targets for n in (t.target, *iter_nodes(t.target)) if isinstance(n, cst.Name)
                }
                if not names - {"_"} or not self._read_later(names - {"_"}, small):
                    self.report(small.value)

    def _read_later(self, names: set[str], assign: cst.Assign) -> bool:
        """One of `names` appears in the function (the module at top level) other than as `assign`'s target."""
        found = self.ctx.name_nodes.within(self.ctx.current_function)
        targets = {id(n) for t in assign.targets for n in (t.target, *iter_nodes(t.target))}
        return any(id(n) not in targets for name in names for n in found.get(name, ()))
