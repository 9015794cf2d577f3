"""Training-loop structure: the ordered events of one loop iteration.

A loop body is flattened into events in source order — backward, optimizer
step, gradient clearing, scheduler step, mode switches — each marked with
whether it sits under a branch and how many loops deep. Rules about ordering
(TL101-TL104, TL111) read these events instead of walking the loop themselves.
Calls to functions defined in the same file are followed one level deep.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import libcst as cst

from torchlint.engine.kinds import Kind
from torchlint.engine.names import dotted
from torchlint.engine.walk import block_statements, children

LOOPS = (cst.For, cst.While)


class Ev(enum.Enum):
    BACKWARD = "backward"
    STEP = "step"  # optimizer step (also scaler.step(opt))
    ZERO_GRAD = "zero_grad"
    SCHED_STEP = "scheduler_step"
    EVAL = "eval"
    TRAIN = "train"
    EMPTY_CACHE = "empty_cache"


@dataclass(frozen=True)
class Event:
    kind: Ev
    node: cst.CSTNode  # the call (or assignment) that is the event
    target: cst.BaseExpression | None  # the optimizer / model / loss involved
    conditional: bool  # under an if/try/while-else branch inside the loop
    depth: int  # 0: directly in this loop; 1+: inside nested loops
    via: cst.FunctionDef | None = None  # reached through a call to this local function


_GRAD_CLEARING_METHODS = frozenset({"zero_", "detach_", "fill_", "requires_grad_"})


class LoopAnalysis:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self._cache: dict[cst.CSTNode, list[Event]] = {}
        self._functions: dict[str, cst.FunctionDef] | None = None

    def events(self, loop: cst.CSTNode) -> list[Event]:
        events = self._cache.get(loop)
        if events is None:
            events = self._cache[loop] = []
            body = block_statements(loop.body)
            self._walk_block(body, events, conditional=False, depth=0, via=None, seen=set())
        return events

    def is_training_loop(self, loop: cst.CSTNode) -> bool:
        return any(e.kind is Ev.BACKWARD for e in self.events(loop))

    # -- walking ----------------------------------------------------------
    def _walk_block(self, stmts, out, conditional, depth, via, seen) -> None:
        for stmt in stmts:
            self._walk_stmt(stmt, out, conditional, depth, via, seen)

    def _walk_stmt(self, stmt, out, conditional, depth, via, seen) -> None:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self._walk_expr(small, out, conditional, depth, via, seen)
            return
        if isinstance(stmt, LOOPS):
            header = stmt.iter if isinstance(stmt, cst.For) else stmt.test
            self._walk_expr(header, out, conditional, depth, via, seen)
            self._walk_block(block_statements(stmt.body), out, conditional, depth + 1, via, seen)
            if stmt.orelse is not None:
                self._walk_block(block_statements(stmt.orelse.body), out, True, depth, via, seen)
            return
        if isinstance(stmt, cst.If):
            self._walk_expr(stmt.test, out, conditional, depth, via, seen)
            self._walk_block(block_statements(stmt.body), out, True, depth, via, seen)
            if stmt.orelse is not None:
                branch = [stmt.orelse] if isinstance(stmt.orelse, cst.If) else block_statements(stmt.orelse.body)
                self._walk_block(branch, out, True, depth, via, seen)
            return
        if isinstance(stmt, cst.With):
            for item in stmt.items:
                self._walk_expr(item.item, out, conditional, depth, via, seen)
            self._walk_block(block_statements(stmt.body), out, conditional, depth, via, seen)
            return
        if isinstance(stmt, cst.Try):
            self._walk_block(block_statements(stmt.body), out, conditional, depth, via, seen)
            for h in stmt.handlers:
                self._walk_block(block_statements(h.body), out, True, depth, via, seen)
            if stmt.orelse is not None:
                self._walk_block(block_statements(stmt.orelse.body), out, conditional, depth, via, seen)
            if stmt.finalbody is not None:
                self._walk_block(block_statements(stmt.finalbody.body), out, conditional, depth, via, seen)
            return
        if isinstance(stmt, cst.Match):
            for case in stmt.cases:
                self._walk_block(block_statements(case.body), out, True, depth, via, seen)

    def _walk_expr(self, node, out, conditional, depth, via, seen) -> None:
        # Post-order, so `scaler.scale(loss).backward()` sees scale() before backward().
        stack = [(node, False)]
        while stack:
            n, done = stack.pop()
            if isinstance(n, (cst.Lambda, cst.FunctionDef, cst.ClassDef)):
                continue
            if not done:
                stack.append((n, True))
                stack.extend((c, False) for c in reversed(children(n)))
                continue
            if isinstance(n, cst.Call):
                self._call_event(n, out, conditional, depth, via, seen)
            elif isinstance(n, cst.Assign):
                for t in n.targets:
                    if isinstance(t.target, cst.Attribute) and t.target.attr.value == "grad":
                        if isinstance(n.value, cst.Name) and n.value.value == "None":
                            out.append(Event(Ev.ZERO_GRAD, n, t.target.value, conditional, depth, via))

    def _call_event(self, call: cst.Call, out, conditional, depth, via, seen) -> None:
        func = call.func
        ctx = self.ctx
        q = ctx.qualname(func)
        if q == "torch.autograd.backward":
            out.append(Event(Ev.BACKWARD, call, call.args[0].value if call.args else None, conditional, depth, via))
            return
        if q == "torch.cuda.empty_cache":
            out.append(Event(Ev.EMPTY_CACHE, call, None, conditional, depth, via))
            return
        if isinstance(func, cst.Attribute):
            method, receiver = func.attr.value, func.value
            if method in ("backward", "manual_backward"):
                target = call.args[0].value if call.args else receiver
                out.append(Event(Ev.BACKWARD, call, target, conditional, depth, via))
                return
            if method == "zero_grad":
                out.append(Event(Ev.ZERO_GRAD, call, receiver, conditional, depth, via))
                return
            if method in _GRAD_CLEARING_METHODS and isinstance(receiver, cst.Attribute) and (
                receiver.attr.value == "grad"
                or isinstance(receiver.value, cst.Attribute) and receiver.value.attr.value == "grad"
            ):
                out.append(Event(Ev.ZERO_GRAD, call, receiver, conditional, depth, via))
                return
            if method == "step":
                kind = ctx.kind(receiver)
                if kind & Kind.SCALER:
                    target = call.args[0].value if call.args else receiver
                    out.append(Event(Ev.STEP, call, target, conditional, depth, via))
                elif kind & Kind.SCHEDULER:
                    out.append(Event(Ev.SCHED_STEP, call, receiver, conditional, depth, via))
                elif kind & Kind.OPTIMIZER:
                    out.append(Event(Ev.STEP, call, receiver, conditional, depth, via))
                return
            if method in ("eval", "train") and not call.args or (method == "train" and _is_false(call)):
                if ctx.kind(receiver) & Kind.MODEL:
                    ev = Ev.EVAL if method == "eval" or _is_false(call) else Ev.TRAIN
                    out.append(Event(ev, call, receiver, conditional, depth, via))
                return
        # one level into functions defined in this file
        target = self._local_function(func)
        if target is not None and via is None and target not in seen:
            seen.add(target)
            body = block_statements(target.body)
            self._walk_block(body, out, conditional, depth, target, seen)

    def _local_function(self, func: cst.BaseExpression) -> cst.FunctionDef | None:
        if self._functions is None:
            self._functions = self.ctx.local_functions()
        name = dotted(func)
        if name is None:
            return None
        if name.startswith("self.") and name.count(".") == 1:
            name = name[5:]
        return self._functions.get(name)


def _is_false(call: cst.Call) -> bool:
    return bool(call.args) and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == "False"
