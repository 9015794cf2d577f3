"""Evidence that CUDA is there where a statement runs: a test that looks at the accelerator, and statements
after which the program only goes on with a GPU.

A hard-coded CUDA device crashes on a CPU-only machine only where nothing before it already required one. This
module answers, from code alone (never from a variable's name):

- `DeviceGuardTest`: does an `if`/`assert` test look at the accelerator — an availability API
  (`torch.cuda.is_available()`), a comparison with a device string (`device.type == "cuda"`), a command-line
  flag (an attribute of `parser.parse_args()`: the user chose), where a tensor already is (`x.is_cuda`,
  `isinstance(x, torch.cuda.FloatTensor)`, `x.type() == "torch.cuda.FloatTensor"`), or a name assigned one of these;
  or is it the caller's choice (`chosen_by_caller`): a parameter of the function (`if train_on_gpu:`), an
  attribute of one (`if args.gpu:` with the caller's `args`), or an attribute every assignment of which stores a method's parameter (`self.use_gpu = use_gpu` in `__init__`);
- `establishes_cuda(stmt)`: after `stmt` the program runs only with CUDA — `assert torch.cuda.is_available()`,
  `if not torch.cuda.is_available(): sys.exit(...)`, `torch.cuda.set_device(...)` (raises without a GPU),
  `dist.init_process_group(backend="nccl")` (NCCL needs GPUs), or a call of a project function whose body does
  one of these unconditionally (`utils.init_distributed_mode(args)`).

Calling contexts (calling_context.py) combine these with a statement's enclosing blocks and its callers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.engine.core.callargs import get_arg, is_name, string_value
from torchlint.engine.core.walk import block_statements, iter_nodes, small_statements
from torchlint.engine.semantic.kinds import ACCELERATOR_CHECKS, CUDA_REQUIRED, CUDA_TENSOR_TYPES, DEVICE_TYPES
from torchlint.engine.semantic.names import dotted

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext

# resolves a called expression of the file to a project function (and that function's file context)
Resolver = Callable[[cst.BaseExpression], "tuple[FileContext, cst.FunctionDef] | None"]


class DeviceGuardTest:
    """Does a test look at the accelerator? Evidence only, never a name. Without `flags`, a command-line flag
    does not count: `if args.wgan: penalty(...)` says nothing about the device code inside `penalty`."""

    def __init__(self, ctx: FileContext, flags: bool = True) -> None:
        self.ctx = ctx
        self.flags = flags  # a command-line flag counts (the user chose the device right where it is used)
        self._assigned: dict[str, list[cst.BaseExpression]] | None = None

    def __call__(self, expr: cst.CSTNode, depth: int = 0) -> bool:
        for n in (expr, *iter_nodes(expr)):
            if isinstance(n, cst.Call) and self.ctx.qualname(n.func) in ACCELERATOR_CHECKS:
                return True
            if isinstance(n, cst.Comparison) and any(
                device_string(e) for e in (n.left, *(c.comparator for c in n.comparisons))
            ):
                return True
            if isinstance(n, cst.Attribute) and n.attr.value in ("is_cuda", "is_mps"):
                return True  # where a tensor or module already is
            if isinstance(n, cst.Call) and self._cuda_type_test(n):
                return True  # `isinstance(x, torch.cuda.FloatTensor)`: x already is on a GPU
            if (
                self.flags
                and isinstance(n, cst.Attribute)
                and isinstance(n.value, cst.Name)
                and self._is_flags(n.value.value)
            ):
                return True
            if isinstance(n, cst.Name) and depth < 3:
                if any(self(value, depth + 1) for value in self.assigned().get(n.value, ())):
                    return True
        return False

    def _cuda_type_test(self, call: cst.Call) -> bool:
        if not is_name(call.func, "isinstance") or len(call.args) != 2:
            return False
        types = call.args[1].value
        options = [e.value for e in types.elements] if isinstance(types, cst.Tuple) else [types]
        return any(self.ctx.qualname(t) in CUDA_TENSOR_TYPES for t in options)

    def chosen_by_caller(self, test: cst.BaseExpression, fn: cst.FunctionDef, cls: cst.ClassDef | None) -> bool:
        """`if use_gpu:` on a value the caller hands in: a parameter (of `fn` or an enclosing function), or
        `self.use_gpu` when every assignment of it in the class (and its bases in this file) stores a parameter.
        The code runs without CUDA when the caller says so, like a command-line flag; off with `flags`."""
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test = test.expression
        if not self.flags:
            return False
        if isinstance(test, cst.Name):
            return self._parameter(test.value, fn)
        params = fn.params.params
        if isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name):
            owner = test.value.value
            if (cls is None or not params or owner != params[0].name.value) and self._parameter(owner, fn):
                return True  # `if args.gpu:` with the caller's `args` (a command-line flag handed in)
        if (
            cls is None
            or not params
            or not (isinstance(test, cst.Attribute) and is_name(test.value, params[0].name.value))
        ):
            return False
        stored = [stores for c in self._lineage(cls) for stores in _stores(c, test.attr.value)]
        return bool(stored) and all(stored)

    def _parameter(self, name: str, fn: cst.FunctionDef) -> bool:
        """`name` read in `fn` is a parameter (of `fn` or an enclosing function)."""
        scope = self.ctx.scopes.binding_scope(name, fn)
        return scope is not None and self.ctx.scopes.is_parameter(name, scope)

    def _lineage(self, cls: cst.ClassDef, depth: int = 0) -> Iterator[cst.ClassDef]:
        """The class and its bases defined at the top of this file."""
        yield cls
        if depth < 4:
            top = {s.name.value: s for s in self.ctx.module.body if isinstance(s, cst.ClassDef)}
            for base in cls.bases:
                if isinstance(base.value, cst.Name) and base.value.value in top:
                    yield from self._lineage(top[base.value.value], depth + 1)

    def assigned(self) -> dict[str, list[cst.BaseExpression]]:
        """Every value assigned to each plain name in the file."""
        if self._assigned is None:
            self._assigned = {}
            for assign in self.ctx.call_sites.assigns:
                for t in assign.targets:
                    if isinstance(t.target, cst.Name):
                        self._assigned.setdefault(t.target.value, []).append(assign.value)
        return self._assigned

    def _is_flags(self, name: str) -> bool:
        return any(
            isinstance(v, cst.Call) and isinstance(v.func, cst.Attribute) and v.func.attr.value == "parse_args"
            for v in self.assigned().get(name, ())
        )


def _stores(cls: cst.ClassDef, attr: str) -> Iterator[bool]:
    """For each assignment `self.<attr> = v` in a method of `cls`: is `v` a parameter of that method?"""
    for method in cls.body.body:
        if not isinstance(method, cst.FunctionDef) or not method.params.params:
            continue
        names = [p.name.value for p in (*method.params.params, *method.params.kwonly_params)]
        for n in iter_nodes(method.body, into_functions=False):
            if isinstance(n, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                targets = [t.target for t in n.targets] if isinstance(n, cst.Assign) else [n.target]
                for t in targets:
                    if isinstance(t, cst.Attribute) and t.attr.value == attr and is_name(t.value, names[0]):
                        yield isinstance(n, cst.Assign) and isinstance(n.value, cst.Name) and n.value.value in names[1:]


def device_string(expr: cst.BaseExpression) -> bool:
    """A device (`"cuda:0"`) or a CUDA tensor type's name (`"torch.cuda.FloatTensor"`, what `x.type()` says)."""
    text = string_value(expr) if isinstance(expr, cst.SimpleString) else None
    return text is not None and (text.partition(":")[0] in DEVICE_TYPES or text in CUDA_TENSOR_TYPES)


def exits(stmts: Sequence[cst.BaseStatement]) -> bool:
    """The block leaves the function/program: raise, return, sys.exit(), pytest.skip(...)."""
    for s in stmts:
        for small in small_statements(s):
            if isinstance(small, (cst.Raise, cst.Return)):
                return True
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                name = dotted(small.value.func) or ""
                if name.rpartition(".")[2] in ("exit", "skip", "skipTest", "quit"):
                    return True
    return False


def guarded_exit(stmt: cst.BaseStatement, tests: DeviceGuardTest) -> bool:
    """`assert torch.cuda.is_available()` or `if not ...: raise` (the code after it runs only when the check
    passed)."""
    for small in small_statements(stmt):
        if isinstance(small, cst.Assert) and tests(small.test):
            return True
    return isinstance(stmt, cst.If) and tests(stmt.test) and exits(block_statements(stmt.body))


class CudaEstablished:
    """Which statements leave the program running only with CUDA (see the module docstring)."""

    def __init__(self, ctx: FileContext, tests: DeviceGuardTest, resolve: Resolver) -> None:
        self.ctx = ctx
        self.tests = tests
        self.resolve = resolve
        self._functions: dict[cst.FunctionDef, bool] = {}
        self._statements: dict[cst.BaseStatement, bool] = {}

    def statement(self, stmt: cst.BaseStatement) -> bool:
        """After `stmt` the program runs only with CUDA (memoised: every later point of a block asks again)."""
        known = self._statements.get(stmt)
        if known is None:
            known = self._statements[stmt] = self._statement(stmt)
        return known

    def _statement(self, stmt: cst.BaseStatement) -> bool:
        if guarded_exit(stmt, self.tests):
            return True
        if not isinstance(stmt, cst.SimpleStatementLine):
            return False  # a call inside an `if`/`try`/loop may not run
        for small in stmt.body:
            for n in iter_nodes(small, into_functions=False):
                if isinstance(n, cst.Call) and self.call(n):
                    return True
        return False

    def call(self, call: cst.Call) -> bool:
        qualname = self.ctx.qualname(call.func)
        if qualname in CUDA_REQUIRED:
            return True
        if qualname == "torch.distributed.init_process_group":
            backend = get_arg(call, "backend", 0)
            return backend is not None and (string_value(backend.value) or "").lower() == "nccl"
        target = self.resolve(call.func)
        return target is not None and target[0].calling_contexts.cuda.function(target[1])

    def function(self, fn: cst.FunctionDef) -> bool:
        """Every run of `fn` that returns has required CUDA: a statement of its body does, and no `return`
        comes before it (recursion: not proven)."""
        known = self._functions.get(fn)
        if known is None:
            self._functions[fn] = False  # a recursive call proves nothing
            known = self._functions[fn] = self._requires(block_statements(fn.body))
        return known

    def _requires(self, body: Sequence[cst.BaseStatement]) -> bool:
        for stmt in body:
            if any(isinstance(n, cst.Return) for n in (stmt, *iter_nodes(stmt, into_functions=False))):
                return False  # `if not torch.cuda.is_available(): return` leaves the caller running on
            if self.statement(stmt):
                return True
        return False
