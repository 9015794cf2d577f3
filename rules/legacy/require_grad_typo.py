"""TL706 require-grad-typo: Assignment to .require_grad (typo of .requires_grad)"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.rule import SAFE, Invalid, Replace, Rule, fix
from torchlint.findings import Severity


class RequireGradTypo(Rule):
    code = "TL706"
    requires = ("require_grad",)
    name = "require-grad-typo"
    message = "`.require_grad` is not a tensor attribute: this assignment does nothing; did you mean `.requires_grad`?"
    severity = Severity.ERROR
    category = "correctness"
    summary = "Assignment to .require_grad (typo of .requires_grad)"
    what = "Flags assignments to an attribute named `require_grad`."
    why = (
        "Python lets you set any attribute on a tensor or parameter, so `p.require_grad = False` silently "
        "creates a new, meaningless attribute: the parameter keeps training (or stays frozen)."
    )
    example = "for p in model.parameters():\n    p.require_grad = False\n"
    fix_example = "for p in model.parameters():\n    p.requires_grad = False\n"
    fix_safety = "Safe: the intended attribute takes effect (which changes what trains — the point of the fix)."
    VALID = ["p.requires_grad = False\n", "require_grad = False\n"]
    INVALID = [
        Invalid(
            "model.encoder.weight.require_grad = False\n",
            line=1,
            fixed="model.encoder.weight.requires_grad = False\n",
        ),
    ]

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        t = node.target
        if isinstance(t, cst.Attribute) and t.attr.value == "require_grad":
            self.report(t, fix=fix("Use `.requires_grad`", Replace(t.attr, "requires_grad"), applicability=SAFE))
