"""Where things are moved between devices: `x.to(device)`, `x.cuda()`, `y = x.to(d)`.

Several rules ask the same questions — "was `model` moved, with which device
expression, in which function, before or after this statement?" (TL301 inputs
left on the CPU, TL302 partial moves, TL401 DDP before the move). The answer is
computed once per file, lazily, on the first question.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.engine.core.callargs import get_arg, string_value
from torchlint.engine.core.walk import iter_nodes, iter_statements, small_statements
from torchlint.engine.semantic.kinds import DEVICE_TYPES, SAME_DEVICE_METHODS
from torchlint.engine.semantic.names import Imports, dotted

if TYPE_CHECKING:
    from torchlint.engine.semantic.call_sites import CallSites
    from torchlint.engine.semantic.project import ModuleSummary
    from torchlint.engine.semantic.scopes import Scopes
    from torchlint.engine.semantic.semantics import Semantics

_DTYPES = frozenset(
    "float float16 float32 float64 half double bfloat16 int int8 int16 int32 int64 long short "
    "uint8 bool complex64 complex128 cfloat cdouble float8_e4m3fn float8_e5m2".split()
)
WRAPPERS = frozenset({"torch.nn.parallel.DistributedDataParallel", "torch.nn.DataParallel"})


@dataclass(frozen=True)
class Move:
    call: cst.Call  # the `.to(...)` / `.cuda(...)` call
    target: str  # dotted name that ends up on the device (`model`, `self.net`)
    suffix: str  # how to apply the same move to another value: ".to(device)", ".cuda()"
    device: cst.BaseExpression | None  # the device expression; None for a bare `.cuda()`
    stmt: cst.BaseStatement  # the statement the move is written in
    function: cst.FunctionDef | None  # the function it is written in (None: module level)


def move_call(call: cst.CSTNode, imports: Imports) -> tuple[cst.BaseExpression, cst.BaseExpression | None] | None:
    """(receiver, device) if `call` moves its receiver to a device, else None.

    `.to(torch.float16)` and `.to(dtype=...)` change the dtype only and are not moves.
    """
    if type(call) is not cst.Call or type(call.func) is not cst.Attribute:  # types: isinstance is slow here
        return None
    method = call.func.attr.value
    if method == "cuda":
        arg = get_arg(call, "device", 0)
        return call.func.value, arg.value if arg else None
    if method == "to":
        arg = get_arg(call, "device", 0)
        if arg is None:
            return None
        qualname = imports.qualname(arg.value)
        if qualname is not None and qualname.startswith("torch.") and qualname[6:] in _DTYPES:
            return None
        return call.func.value, arg.value
    return None


def device_type(expr: cst.BaseExpression | None, imports: Imports) -> str | None:
    """The device type a literal device expression names: "cuda" for `"cuda:0"`, `torch.device("cuda", 1)`
    and a bare `.cuda()` (None); None when the expression is not a literal device."""
    if expr is None:
        return "cuda"
    if isinstance(expr, cst.Call) and imports.qualname(expr.func) == "torch.device" and expr.args:
        expr = expr.args[0].value
    text = string_value(expr)
    return text.partition(":")[0] if text else None


def contains_move(expr: cst.BaseExpression, imports: Imports) -> bool:
    """`expr` is (or its method chain / arguments contain) a device move."""
    if move_call(expr, imports) is not None:
        return True
    return any(move_call(n, imports) is not None for n in iter_nodes(expr))


def placed_on_device(expr: cst.BaseExpression, imports: Imports) -> bool:
    """`expr` is a tensor put on a device where it is made: a move (`x.to(device)`, `x.cuda()`) or a
    `torch.*` factory given a `device=` that is not a literal CPU (`torch.tensor(a, device=device)`)."""
    if contains_move(expr, imports):
        return True
    while (  # `torch.tensor(a, device=device).unsqueeze(1)`: the result stays where the tensor is
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value in SAME_DEVICE_METHODS
    ):
        expr = expr.func.value
    if not isinstance(expr, cst.Call):
        return False
    qualname = imports.qualname(expr.func)
    device = get_arg(expr, "device")
    if qualname is None or not qualname.startswith("torch.") or device is None:
        return False
    return device_type(device.value, imports) != "cpu"


def _chain_move(
    expr: cst.BaseExpression, imports: Imports
) -> tuple[cst.Call, tuple[cst.BaseExpression, cst.BaseExpression | None]] | None:
    """The move in a method chain `Net().to(d).train()`, outermost first."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        found = move_call(expr, imports)
        if found is not None:
            return expr, found
        expr = expr.func.value
    return None


# A moved thing: (id of the scope that binds the name's head, dotted name). `self.x` is keyed by its
# class, so a move in `__init__` answers for `forward`.
_Key = tuple[int, str]


class DeviceMoves:
    """Every move in a file, by what was moved: the binding of its name (scopes.py), not the name."""

    def __init__(
        self,
        module: cst.Module,
        imports: Imports,
        scopes: Scopes,
        semantics: Semantics,
        sites: Callable[[], CallSites],
    ) -> None:
        self.module = module
        self.sites = sites  # asked only for the order of module-level code
        self.imports = imports
        self.scopes = scopes
        self.semantics = semantics
        self._by_key: dict[_Key, list[Move]] = {}
        self._aliasing: set[int] = set()  # parameters being resolved through their callers
        self.called: set[str] = set()  # dotted names that are called somewhere: `model(x)`
        self._scan(module.body, module, None)

    def of(self, name: str | None, at: cst.CSTNode | None = None, before: cst.Call | None = None) -> list[Move]:
        """The moves of what `name` denotes when read in scope `at` (the module by default). A parameter
        no move inside its function reaches is moved when every caller in the file passes a moved value.
        With `before`, a call of module-level code reading it: that code runs in order (a notebook's cells
        too), so a move made by module-level code of a later top-level statement has not run yet."""
        if not name:
            return []
        scope = at if at is not None else self.module
        found = self._by_key.get(self._key(name, scope), [])
        if found and before is not None:
            order = self.sites().top_order
            use = order.get(id(before))
            if use is not None:
                found = [m for m in found if order.get(id(m.call), use) <= use]
        if found or "." in name:
            return found
        binding = self.scopes.binding_scope(name, scope)
        if isinstance(binding, cst.FunctionDef) and self.scopes.is_parameter(name, binding):
            return self._through_callers(name, binding)
        return []

    def every(self) -> list[Move]:
        """Every move of the file, whatever it moved."""
        return [m for ms in self._by_key.values() for m in ms]

    def parts_of(self, root: str, at: cst.CSTNode) -> list[Move]:
        """Moves of attributes of `root` (`root.encoder.to(d)`) as read in scope `at`."""
        key = self._key(root, at)
        prefix = root + "."
        return [
            m for (scope, name), ms in self._by_key.items() if scope == key[0] and name.startswith(prefix) for m in ms
        ]

    def _through_callers(self, name: str, fn: cst.FunctionDef) -> list[Move]:
        params = (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)
        param = next((p for p in params if p.name.value == name), None)
        if param is None or id(fn) in self._aliasing:
            return []
        self._aliasing.add(id(fn))  # recursion: `def f(m): f(m)` proves nothing
        try:
            moves: list[Move] = []
            for arg, caller, call in self.semantics.arguments(fn, param):
                found = self.of(dotted(arg), caller.node, call)
                if not found:
                    return []  # a caller passes something not proven moved
                moves.extend(found)
            return moves
        finally:
            self._aliasing.discard(id(fn))

    def _key(self, name: str, at: cst.CSTNode) -> _Key:
        head = name.partition(".")[0]
        binding = self.scopes.binding_scope(head, at) or self.module  # unbound: a module global made elsewhere
        info = self.scopes.info(binding)
        if (
            "." in name
            and isinstance(binding, cst.FunctionDef)
            and info is not None
            and info.params[:1] == [head]
            and info.parent is not None
            and info.parent.is_class
        ):
            return id(info.parent.node), name  # `self.net`: the instance's attribute, in any method
        return id(binding), name

    def _scan(self, body: Sequence[cst.BaseStatement], scope: cst.CSTNode, function: cst.FunctionDef | None) -> None:
        for stmt in iter_statements(body):
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                inner = stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else []
                self._scan(inner, stmt, stmt if isinstance(stmt, cst.FunctionDef) else None)
            for small in small_statements(stmt):
                self._small(small, stmt, scope, function)

    def _small(
        self,
        small: cst.BaseSmallStatement,
        stmt: cst.BaseStatement,
        scope: cst.CSTNode,
        function: cst.FunctionDef | None,
    ) -> None:
        for node in iter_nodes(small, into_functions=False):
            if isinstance(node, cst.Call):
                name = dotted(node.func)
                if name:
                    self.called.add(name)
                found = move_call(node, self.imports)
                if found is not None:
                    self._add(dotted(found[0]), node, found[1], stmt, scope, function)
        if isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
            source = self._moved_value(small.value, scope)
            if source is not None:
                for t in targets:
                    self._add(dotted(t), source[0], source[1], stmt, scope, function)

    def _moved_value(
        self, value: cst.BaseExpression, scope: cst.CSTNode
    ) -> tuple[cst.Call, cst.BaseExpression | None] | None:
        """(move call, device) if `value` is already on a device: `Net().to(d)`, `DDP(moved_model)`."""
        chained = _chain_move(value, self.imports)
        if chained is not None:
            call, (_, device) = chained
            return call, device
        if isinstance(value, cst.Call) and self.imports.qualname(value.func) in WRAPPERS and value.args:
            moves = self.of(dotted(value.args[0].value), scope)
            return (moves[0].call, moves[0].device) if moves else None
        return None

    def _add(
        self,
        target: str | None,
        call: cst.Call,
        device: cst.BaseExpression | None,
        stmt: cst.BaseStatement,
        scope: cst.CSTNode,
        function: cst.FunctionDef | None,
    ) -> None:
        if not target:
            return
        key = self._key(target, scope)
        method = cst.ensure_type(call.func, cst.Attribute).attr.value  # a move is a method call
        arg = "" if device is None else self.module.code_for_node(device)
        self._by_key.setdefault(key, []).append(Move(call, target, f".{method}({arg})", device, stmt, function))


# Arguments that must stay on the CPU: `pack_padded_sequence(x, lengths)` wants its lengths there.
CPU_ONLY = {"pack_padded_sequence": (1, "lengths")}
# Library calls (a function, or a module class: its call) that take some arguments on the CPU by API:
# (positions, keywords). CTC losses accept their lengths there (cuDNN's CTC requires it).
_CTC_LENGTHS = ({2, 3}, {"input_lengths", "target_lengths"})
CPU_ARGUMENTS = {"torch.nn.CTCLoss": _CTC_LENGTHS, "torch.nn.functional.ctc_loss": _CTC_LENGTHS}


# Wrappers whose forward moves every input to the device its module runs on: DataParallel scatters the
# inputs to its device_ids (device 0 with one GPU), so a CPU batch is what it expects. (DDP moves inputs only
# when built with device_ids: not proven by the class alone.)
MOVES_ITS_INPUTS = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel"})


def moves_its_inputs(qualnames: Iterable[str | None]) -> bool:
    """Whether a call of any of these library APIs moves its inputs to the model's device itself."""
    return any(q in MOVES_ITS_INPUTS for q in qualnames)


def cpu_arguments_of(qualnames: Iterable[str | None]) -> tuple[set[int], set[str]]:
    """(positions, keywords) that may stay on the CPU in a call of any of these library APIs."""
    positions: set[int] = set()
    keywords: set[str] = set()
    for q in qualnames:
        found = CPU_ARGUMENTS.get(q or "")
        if found is not None:
            positions |= found[0]
            keywords |= found[1]
    return positions, keywords


def forward_arguments_left_unmoved(summaries: list[ModuleSummary]) -> tuple[set[int], set[str]]:
    """(positions, keywords) of `forward` parameters a caller need not move to the model's device: some module
    passes them where a CPU value is required (`pack_padded_sequence(x, lengths)`), or moves them itself
    (`torch.cat(inputs).cuda()`).

    Read from the file and the project modules it imports (their `ast` summaries): a model call's argument in
    one of these slots is not a batch left behind on the CPU.
    """
    positions: set[int] = set()
    keywords: set[str] = set()
    for summary in summaries:
        text = summary.text
        if "def forward" not in text or not any(name in text for name in (*CPU_ONLY, ".cuda(", ".to(")):
            continue  # the cheap test first: only a `forward` matters
        for fn in ast.walk(summary.tree):
            if isinstance(fn, ast.FunctionDef) and fn.name == "forward":
                for found in (cpu_only_parameters(fn), self_moved_parameters(fn)):
                    positions.update(found[0])
                    keywords.update(found[1])
    return positions, keywords


def self_moved_parameters(forward: ast.FunctionDef) -> tuple[set[int], set[str]]:
    """(positions after `self`, names) of the parameters one `forward` moves to a device itself: the receiver
    of a `.cuda()` / `.to(device)` in its body reads them (`torch.cat(inputs[a:b]).cuda(non_blocking=True)`)."""
    params = [a.arg for a in forward.args.args][1:]
    used: set[str] = set()
    for call in ast.walk(forward):
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and moves_device(call):
            used |= {n.id for n in ast.walk(call.func.value) if isinstance(n, ast.Name)}
    found = {i: p for i, p in enumerate(params) if p in used}
    return set(found), set(found.values())


def moves_device(call: ast.Call) -> bool:
    """`.cuda(...)`, or `.to(...)` with a device (not a dtype such as `torch.float16`)."""
    method = call.func.attr  # type: ignore[attr-defined]
    if method == "cuda":
        return True
    if method != "to":
        return False
    arg = next((k.value for k in call.keywords if k.arg == "device"), call.args[0] if call.args else None)
    if isinstance(arg, ast.Constant):
        return isinstance(arg.value, str) and arg.value.partition(":")[0] in DEVICE_TYPES
    return isinstance(arg, (ast.Name, ast.Attribute)) and not _torch_attribute(arg)


def _torch_attribute(expr: ast.expr) -> bool:
    """`torch.float16`: a dtype, not a device."""
    return isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "torch"


def cpu_only_parameters(forward: ast.FunctionDef, as_is: bool = False) -> tuple[set[int], set[str]]:
    """(positions after `self`, names) of the parameters of one `forward` that it hands to an argument that
    must stay on the CPU (`pack_padded_sequence(x, lengths)`); with `as_is`, only those handed on unchanged
    (not `lengths.cpu()`), so the caller's value must already be on the CPU."""
    positions: set[int] = set()
    keywords: set[str] = set()
    params = [a.arg for a in forward.args.args][1:]
    for call in ast.walk(forward):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        callee = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if callee not in CPU_ONLY:
            continue
        index, keyword = CPU_ONLY[callee]
        value = call.args[index] if len(call.args) > index else None
        value = next((k.value for k in call.keywords if k.arg == keyword), value)
        if as_is:
            used = {value.id} if isinstance(value, ast.Name) else set()
        else:
            used = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)} if value is not None else set()
        for i, p in enumerate(params):
            if p in used:
                positions.add(i)
                keywords.add(p)
    return positions, keywords
