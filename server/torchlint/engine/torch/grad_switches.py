"""Where a file switches `requires_grad`, and of what.

Freezing a tensor or a module (`w.requires_grad_(False)`, `G.requires_grad = False`, `for p in
G.parameters(): p.requires_grad = False`, a helper that does it) changes what a backward pass reaches and
whether an in-place update of a leaf raises; rules that judge either stay silent about what the file
switches (TL116: which network a GAN step trains is then the author's; TL120: a tensor turned off is no
leaf that requires grad). One walk of the file, on the first question; a file that never names
`requires_grad` switches nothing and is not walked.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from torchlint.engine.core.callargs import is_name
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.semantic.names import dotted

_ATTR = "requires_grad"
_METHOD = "requires_grad_"


@dataclass
class GradSwitches:
    calls: list[cst.Call] = field(default_factory=list)  # every `x.requires_grad_(...)`, in source order
    turned_off: set[str] = field(default_factory=set)  # `x` of `x.requires_grad_(False)` / `x.requires_grad = False`
    loops: list[cst.For] = field(default_factory=list)  # `for` loops whose body names a `.requires_grad` attribute
    functions: set[int] = field(default_factory=set)  # ids of the functions whose code names one


def read(module: cst.Module, text: str) -> GradSwitches:
    out = GradSwitches()
    if _ATTR not in text:
        return out
    for node in iter_nodes(module):
        if type(node) is cst.Call:
            func = node.func
            if type(func) is cst.Attribute and func.attr.value == _METHOD:
                out.calls.append(node)
                if len(node.args) == 1 and node.args[0].keyword is None and is_name(node.args[0].value, "False"):
                    _add(out.turned_off, func.value)
        elif type(node) is cst.Assign:
            if is_name(node.value, "False"):
                for t in node.targets:
                    if type(t.target) is cst.Attribute and t.target.attr.value == _ATTR:
                        _add(out.turned_off, t.target.value)
        elif type(node) is cst.For:
            if _names_attribute(node.body):
                out.loops.append(node)
        elif type(node) is cst.FunctionDef and _names_attribute(node):
            out.functions.add(id(node))
    return out


def _add(names: set[str], receiver: cst.BaseExpression) -> None:
    name = dotted(receiver)
    if name is not None:
        names.add(name)


def _names_attribute(root: cst.CSTNode) -> bool:
    return any(type(n) is cst.Attribute and n.attr.value == _ATTR for n in iter_nodes(root))  # by type: fast misses
