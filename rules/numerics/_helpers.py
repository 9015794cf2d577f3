"""What more than one numerics rule needs."""

from __future__ import annotations

from typing import ClassVar

import libcst as cst

from torchlint.engine.context import FileContext
from torchlint.engine.core.callargs import get_arg, int_value
from torchlint.engine.core.node_positions import positions
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.rule import NodeFix, Rule
from torchlint.engine.torch.activations import Feed


def is_one(expr: cst.BaseExpression) -> bool:
    return (isinstance(expr, cst.Integer) and expr.value == "1") or (
        isinstance(expr, cst.Float) and expr.evaluated_value == 1.0
    )


def torch_call(ctx: FileContext, node: cst.Call, name: str) -> bool:
    return ctx.qualname(node.func) == f"torch.{name}" and len(node.args) == 1 and node.args[0].keyword is None


class LossInputRule(Rule):
    """A loss fed an activation's output it should not get: reported at the activation when it is in
    this file (naming the loss's line), else at the loss call (naming the other file's line)."""

    loss: ClassVar[str]  # the loss key of activations.LOSS_FUNCTIONS
    activation: ClassVar[str]

    def visit_Module(self, node: cst.Module) -> None:
        self.by_node: dict[cst.CSTNode, list[Feed]] = {}
        for feed in self.ctx.loss_feeds:
            if feed.loss == self.loss and feed.origin.activation == self.activation:
                self.by_node.setdefault(feed.origin.node or feed.call, []).append(feed)

    def visit_Call(self, node: cst.Call) -> None:
        feeds = self.by_node.get(node)
        if not feeds:
            return
        feed = feeds[0]  # one finding per activation, however many losses it feeds
        cites: tuple[int, ...]
        if feed.origin.node is None:
            place, cites = f"its input comes from the {self.activation} at {feed.origin.elsewhere}", ()
        else:
            line = line_of(self.ctx.module, feed.call)
            place, cites = f"it reaches `{feed.loss_name}` on line {line}", (line,)
        self.report(node, self.message.format(place=place), fix=self.fix_for(feed), cites=cites)

    def fix_for(self, feed: Feed) -> NodeFix | None:
        return None


def line_of(module: cst.Module, node: cst.CSTNode) -> int:
    """The line a node starts on (positions of its top-level statement only: asked for a message)."""
    top = next(s for s in module.body if s is node or any(n is node for n in iter_nodes(s)))
    return positions(module, {top})[node][0][0]


def inline(feed: Feed) -> bool:
    """The activation is applied inside the loss's argument itself: nothing else reads its output."""
    node = feed.origin.node
    return node is feed.argument or any(n is node for n in iter_nodes(feed.argument))


def activation_input(node: cst.CSTNode) -> cst.BaseExpression | None:
    """What the activation call `node` was applied to: `x` of `F.softmax(x, 1)`, `x.softmax(1)`, `self.sm(x)`."""
    if not isinstance(node, cst.Call):
        return None
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value in ("softmax", "sigmoid") and dim_only(node):
        inner = func.value  # the tensor method
    else:
        arg = get_arg(node, "input", 0)
        if arg is None:
            return None
        inner = arg.value
    if isinstance(inner, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
        return inner.with_changes(lpar=[], rpar=[])
    return inner.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def dim_only(call: cst.Call) -> bool:
    """`x.softmax(1)`, `x.sigmoid()`: a tensor method's arguments (a dim at most), not a module's input."""
    if not call.args:
        return True
    first = call.args[0]
    return (first.keyword is not None and first.keyword.value == "dim") or int_value(first.value) is not None
