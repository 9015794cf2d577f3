"""In what context does a statement run? Its function's calling context, joined over every call site.

A warning about a statement in a helper must not assume the helper runs every step, with autograd on, on any
machine: `validate()` may be called only under `if step % 100 == 0:`, only inside
`with torch.set_grad_enabled(False):`, only after a set-up helper that exits without a GPU. This analysis
answers for any point of a file:

- `grad_off`: autograd is off there (True), on (False), or either (None): `with torch.no_grad()` /
  `inference_mode()` / `set_grad_enabled(False)` blocks and decorators, `torch.enable_grad()`;
- `frequency`: ONCE (not in a loop), CONDITIONAL (behind an `if`/`except`/conditional expression below its
  innermost loop: `if step % N == 0: validate()`), EVERY (each iteration of a loop), or UNKNOWN;
- `cuda`: CUDA is known to be there, or a test looking at the accelerator guards it (cuda_guards.py);
- `rank0`: only the rank-0 process runs it (`if dist.get_rank() == 0:`, `if accelerator.is_main_process:`);
- `process_group`: the default process group is set up before it (True), not (False: module level with no
  set-up before), or unknown (None): a statement before it in its blocks, or before each of its calls, sets it
  up (process_group.py: `init_process_group(...)` or a project helper that calls it, in any file).

What the enclosing blocks of the point do not decide comes from its function's entry context: the join over
every call site of the function, in this file and in the project files that import it (through the project
index). A method's call sites are its possible callers: every `self.m(...)` and `x.m(...)` of the project (the
receiver's class is mostly unknown, and an object reaches a method without an import) except those whose
receiver is proven built by another class with its own `m`. A function with no known call site, called from a
lambda or a def's header, handed on as a value (a callback; `x.m` read without a call), or sharing its name with
another function of the file, has an UNKNOWN entry; a recursive call adds nothing to its own function's entry.
Rules read `ctx.context_at(node)`; none walks callers itself.
"""

from __future__ import annotations

import ast
import enum
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.engine.core.walk import parent_map
from torchlint.engine.flow.cuda_guards import CudaEstablished, DeviceGuardTest
from torchlint.engine.flow.no_grad_callers import KEPT, grad_mode
from torchlint.engine.flow.process_group import ProcessGroupSetUp
from torchlint.engine.flow.ranks import rank_zero_test
from torchlint.engine.semantic.call_sites import CallSite
from torchlint.engine.semantic.kinds import Kind
from torchlint.engine.semantic.names import is_main_guard
from torchlint.engine.semantic.values import where_of

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext


INHERIT = object()  # the enclosing blocks do not decide a fact: the function's entry does
RECURSIVE = object()  # a call made while its own function's entry is worked out: it adds nothing
UNKNOWN_CALLER = object()  # a caller that cannot be known: the entry is unknown


class Frequency(enum.IntEnum):
    """How often a point runs relative to the loop that runs it; the join is the larger."""

    ONCE = 0
    CONDITIONAL = 1
    EVERY = 2
    UNKNOWN = 3


FACTS = ("grad_off", "frequency", "cuda", "rank0", "process_group")


def _join(fact: str, a: object, b: object) -> object:
    if fact == "grad_off" or fact == "process_group":  # (`no_grad`, `cuda`, `rank0`: proven at every call)
        return a if a == b else None
    if fact == "frequency":
        return max(a, b)  # type: ignore[call-overload]
    return a and b


# what an unknown caller brings, and what module level is: runs once, at import, with autograd on
_UNKNOWN: dict[str, object] = {
    "grad_off": None,
    "no_grad": False,
    "frequency": Frequency.UNKNOWN,
    "cuda": False,
    "cuda_checked": False,
    "rank0": False,
    "process_group": None,
}
_MODULE: dict[str, object] = {
    "grad_off": False,
    "no_grad": False,
    "frequency": Frequency.ONCE,
    "cuda": False,
    "rank0": False,
    "process_group": False,
}
_GRAD_FACTS = frozenset({"grad_off", "no_grad"})
# the join of anything with these is themselves: once reached, no further call site is read
_ABSORBING = {**_UNKNOWN, "frequency": Frequency.UNKNOWN}


class Context:
    """The context of one point, each fact worked out when first read (a CUDA guard need not be looked
    for when only the grad mode is asked)."""

    def __init__(self, analysis: CallingContexts, node: cst.CSTNode, fn: cst.FunctionDef | None) -> None:
        self._analysis, self._node, self._fn = analysis, node, fn

    @property
    def grad_off(self) -> bool | None:
        return self._analysis.fact("grad_off", self._node, self._fn)  # type: ignore[return-value]

    @property
    def no_grad(self) -> bool:
        """Autograd is proven off (`grad_off is True`), worked out call site by call site until one is not:
        cheaper than `grad_off`, which must tell on from either."""
        return bool(self._analysis.fact("no_grad", self._node, self._fn))

    @property
    def frequency(self) -> Frequency:
        return self._analysis.fact("frequency", self._node, self._fn)  # type: ignore[return-value]

    @property
    def cuda(self) -> bool:
        return bool(self._analysis.fact("cuda", self._node, self._fn))

    @property
    def rank0(self) -> bool:
        return bool(self._analysis.fact("rank0", self._node, self._fn))

    @property
    def process_group(self) -> bool | None:
        return self._analysis.fact("process_group", self._node, self._fn)  # type: ignore[return-value]

    @property
    def rare(self) -> bool:
        """Proven not to run in every iteration of the loop around its call: conditional, once, or on rank 0."""
        return self.frequency in (Frequency.ONCE, Frequency.CONDITIONAL) or self.rank0


Root = cst.FunctionDef | cst.Module
# from a node up to its root: (ancestor, the child of it the node lies in)
Ancestors = list[tuple[cst.CSTNode, cst.CSTNode]]


class _Shared:
    """What the calling-context analyses of one lint share across files: the other files' contexts and the
    entries being computed (a cycle of calls through several files stops there)."""

    def __init__(self) -> None:
        self.files: dict[Path, FileContext | None] = {}
        self.computing: set[tuple[str, cst.FunctionDef]] = set()
        self.cuts = 0  # recursive calls left out so far


class CallingContexts:
    def __init__(self, ctx: FileContext, shared: _Shared | None = None) -> None:
        self.ctx = ctx
        self.shared = shared or _Shared()
        self.tests = DeviceGuardTest(ctx)
        self.checks = DeviceGuardTest(ctx, flags=False)  # what a call site's guard must show for its callee
        self.cuda = CudaEstablished(ctx, self.tests, self.resolve)
        self.process_group = ProcessGroupSetUp(self._sets_up)
        self._entries: dict[tuple[str, cst.FunctionDef], object] = {}
        self._parents: dict[Root, dict[int, cst.CSTNode]] = {}
        self._sites: dict[int, CallSite] = {}  # id(call) -> its call site, for the calls asked about
        self._roots: dict[cst.FunctionDef, tuple[cst.CSTNode, ...]] | None = None

    # -- the questions ----------------------------------------------------------------------------------
    def at(self, node: cst.CSTNode, fn: cst.FunctionDef | None) -> Context:
        """The context of `node`, which lies in `fn` (None: at module level or in a class body)."""
        return Context(self, node, fn)

    def entry(self, fn: cst.FunctionDef) -> Context:
        """The join of the contexts at every call of `fn` (unknown when a caller is unknown)."""
        return Context(self, fn, fn)  # `fn` as its own point: what its enclosing blocks add is nothing

    def fact(self, fact: str, node: cst.CSTNode, fn: cst.FunctionDef | None) -> object:
        if node is fn:
            assert fn is not None
            return self._entry_fact(fact, fn)
        ancestors = self._ancestors(node, fn if fn is not None else self.ctx.module, fact)
        if ancestors is None:
            return _UNKNOWN[fact]
        local = getattr(self, f"_{fact}")(ancestors, fn)
        if local is not INHERIT:
            return local
        fact = fact.partition("_checked")[0]  # the entry's own fact
        return self._entry_fact(fact, fn) if fn is not None else _MODULE[fact]

    def _entry_fact(self, fact: str, fn: cst.FunctionDef) -> object:
        k = (fact, fn)
        if k in self._entries:
            return self._entries[k]
        shared = self.shared
        if k in shared.computing:
            shared.cuts += 1
            return RECURSIVE
        cuts = shared.cuts
        shared.computing.add(k)
        try:
            found = self._entry(fact, fn)
        finally:
            shared.computing.discard(k)
        if shared.cuts == cuts or not shared.computing:
            self._entries[k] = found  # not when a cycle through an entry still being worked out was cut
        return found

    # -- entry: the call sites --------------------------------------------------------------------------
    def _entry(self, fact: str, fn: cst.FunctionDef) -> object:
        unknown = _UNKNOWN[fact]
        chain = self._chain(fn)
        if chain is None:
            return unknown
        method = bool(chain) and type(chain[-1]) is cst.ClassDef
        k = ("self" if method else "name", fn.name.value)
        index = self.ctx.call_sites
        if k in index.referenced or method and ("attr", k[1]) in index.referenced:
            return unknown  # handed on as a value: a callback may run anywhere
        for other, other_chain in index.functions.get(fn.name.value, ()):
            if other is not fn and (bool(other_chain) and type(other_chain[-1]) is cst.ClassDef) == method:
                return unknown  # another function of the file answers to the same calls
        joined: object = RECURSIVE
        values = self._method_values(fact, fn, chain[-1]) if method else self._values(fact, fn, top=not chain)
        for v in values:
            if v is UNKNOWN_CALLER:
                return unknown
            if v is not RECURSIVE:
                joined = v if joined is RECURSIVE else _join(fact, joined, v)
                if joined == _ABSORBING[fact]:
                    return joined  # no further call can change it: the other files are not read
        return unknown if joined is RECURSIVE else joined

    def _values(self, fact: str, fn: cst.FunctionDef, top: bool) -> Iterator[object]:
        """The fact at each call of function `fn`: this file's first, then (for a top-level function) the
        project files that import this one, each read only when asked for."""
        for site in self.ctx.call_sites.calls_of(fn):
            yield self._site(fact, site)
        if top:
            yield from self._other_files(fact, fn)

    def _method_values(self, fact: str, fn: cst.FunctionDef, cls: cst.CSTNode) -> Iterator[object]:
        """The fact at each call that may run method `fn` of `cls`: `self.m(...)` and, whatever the receiver
        (its class unknown), `x.m(...)` in this file, then in every project file that calls an `m`: a method
        is reached through objects handed anywhere, so no import is needed. A receiver built by another
        class that defines its own `m` runs that one, and is left out."""
        owner = (Path(self.ctx.path).resolve(), cls.name.value)  # type: ignore[attr-defined]
        yield from self.method_calls(fact, fn.name.value, owner)
        project = self.ctx.project
        if project is None:
            return
        callers = project.calling(fn.name.value)
        if callers is None:
            yield UNKNOWN_CALLER
            return
        for summary in callers:
            if summary.path == owner[0]:
                continue
            other = self.file_context(summary.path, summary.text)
            if other is None:
                yield UNKNOWN_CALLER
                return
            yield from other.calling_contexts.method_calls(fact, fn.name.value, owner)

    def method_calls(self, fact: str, name: str, owner: tuple[Path, str]) -> Iterator[object]:
        """The fact at this file's calls `self.name(...)` / `x.name(...)` that may run method `name` of the
        class `owner` (its file and name); UNKNOWN_CALLER when `x.name` is also used as a value."""
        index = self.ctx.call_sites
        elsewhere = Path(self.ctx.path).resolve() != owner[0]
        if elsewhere and (("self", name) in index.referenced or ("attr", name) in index.referenced):
            yield UNKNOWN_CALLER  # (the owner's file has checked its own references)
            return
        yield from (self._site(fact, site) for site in index.by_key.get(("self", name), ()))
        for site in index.by_key.get(("attr", name), ()):
            if not self._other_class(site, owner):
                yield self._site(fact, site)

    def _other_class(self, site: CallSite, owner: tuple[Path, str]) -> bool:
        """The call's receiver is built by a class other than `owner` that defines the method itself."""
        func = site.call.func
        assert type(func) is cst.Attribute
        built = self.ctx.values.builder(func.value, where_of(site))
        found = self.ctx.semantics.definition(built[0].func) if built is not None else None
        if found is None or found[1] not in found[0].class_defs:
            return False
        summary, name = found
        if (summary.path.resolve(), name) == owner:
            return False
        body = summary.class_defs[name].body
        method = func.attr.value
        return any(isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)) and d.name == method for d in body)

    def _site(self, fact: str, site: CallSite) -> object:
        """The fact at one call site; RECURSIVE for a call from a function whose entry is being worked out."""
        if site.in_lambda or site.header:
            return _UNKNOWN[fact]
        caller = site.function
        if caller is not None and (fact, caller) in self.shared.computing:
            self.shared.cuts += 1
            return RECURSIVE
        if site.chain and type(site.chain[-1]) is cst.ClassDef and len(site.chain) > 1:
            return _UNKNOWN[fact]  # a class body inside a function
        # a flag guarding the call is no evidence about the device code inside the callee
        self._sites[id(site.call)] = site
        return self.fact("cuda_checked" if fact == "cuda" else fact, site.call, caller)

    def _other_files(self, fact: str, fn: cst.FunctionDef) -> Iterator[object]:
        """The fact at the calls of top-level `fn` in the project files that import this one; UNKNOWN_CALLER
        for a caller that cannot be known (a file that cannot be read, a reference without a call, an index
        over its limit)."""
        project = self.ctx.project
        if project is None:
            return
        here = Path(self.ctx.path).resolve()
        callers = project.calling(fn.name.value)
        if callers is None:
            yield UNKNOWN_CALLER
            return
        stem = here.stem if here.name != "__init__.py" else here.parent.name
        for summary in callers:
            if summary.path == here or not any(stem in q.split(".") for q in summary.imports.values()):
                continue  # the cheap test first: no import names this module
            if not project.imports_module(summary, here):
                continue
            other = self.file_context(summary.path, summary.text)
            if other is None:
                yield UNKNOWN_CALLER
                return
            yield from other.calling_contexts.imported_calls(fact, here, fn.name.value)

    def imported_calls(self, fact: str, target: Path, name: str) -> Iterator[object]:
        """The fact at the calls of `target`'s function `name` in this file; UNKNOWN_CALLER when it is also
        used as a value (a callback)."""
        ctx = self.ctx
        project = ctx.project
        assert project is not None
        if ("name", name) in ctx.call_sites.referenced and name in ctx.imports.table:
            yield UNKNOWN_CALLER
            return
        folder = Path(ctx.path).resolve().parent
        for site in ctx.call_sites.calls:
            func = site.call.func
            last = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else None
            if last != name:
                continue
            qualname = ctx.qualname(func)
            found = project.resolve(qualname, folder) if qualname else None
            if found is not None and found[0].path == target and found[1] == name:
                yield self._site(fact, site)

    def file_context(self, path: Path, text: str) -> FileContext | None:
        """The context of another project file, parsed once per lint."""
        from torchlint.engine.context import FileContext  # context.py imports this module

        if path not in self.shared.files:
            try:
                module = cst.parse_module(text)
            except (cst.ParserSyntaxError, RecursionError, ValueError):  # unreadable: unknown
                self.shared.files[path] = None
            else:
                other = FileContext(str(path), text, module, self.ctx._torch_version)
                other.__dict__["calling_contexts"] = CallingContexts(other, self.shared)
                self.shared.files[path] = other
        return self.shared.files[path]

    def resolve(self, func: cst.BaseExpression) -> tuple[FileContext, cst.FunctionDef] | None:
        """The function a call runs: one of this file's top-level functions, or a project module's."""
        name = func.value if type(func) is cst.Name else None
        if name is not None and name not in self.ctx.imports.table:
            defs = self.ctx.call_sites.functions.get(name, ())
            top = [f for f, chain in defs if not chain]
            return (self.ctx, top[0]) if len(defs) == 1 and top else None
        project = self.ctx.project
        qualname = self.ctx.qualname(func)
        if project is None or qualname is None:
            return None
        found = project.resolve(qualname, Path(self.ctx.path).resolve().parent)
        if found is None or found[1] not in found[0].functions:
            return None
        other = self.file_context(found[0].path, found[0].text)
        if other is None:
            return None
        defs = other.call_sites.functions.get(found[1], ())
        top = [f for f, chain in defs if not chain]
        return (other, top[0]) if len(top) == 1 else None

    def _sets_up(self, func: cst.BaseExpression) -> bool:
        """The function `func` runs (this file's or a project module's) sets the process group up."""
        target = self.resolve(func)
        return target is not None and target[0].calling_contexts.process_group.function(target[1])

    def _chain(self, fn: cst.FunctionDef) -> tuple[cst.CSTNode, ...] | None:
        if self._roots is None:
            self._roots = {f: c for defs in self.ctx.call_sites.functions.values() for f, c in defs}
        return self._roots.get(fn)

    def ancestors(self, node: cst.CSTNode, fn: cst.FunctionDef | None) -> Ancestors | None:
        """From `node` (in `fn`; None: module level) up: (ancestor, the child it is reached through)."""
        return self._ancestors(node, fn if fn is not None else self.ctx.module)

    # -- the enclosing blocks ---------------------------------------------------------------------------
    def _ancestors(self, node: cst.CSTNode, root: Root, fact: str = "") -> Ancestors | None:
        if type(root) is cst.FunctionDef and node is root.body:
            return [(root, node)]  # a function's body: nothing between it and the function
        site = self._sites.get(id(node)) if fact in _GRAD_FACTS else None
        if site is not None:  # the grad mode needs only the `with` blocks around a call: call_sites has them
            return [(w, w.body) for w in reversed(site.withs)]
        parents = self._parents.get(root)
        if parents is None:
            parents = self._parents[root] = parent_map(root)
        out: Ancestors = []
        while node is not root:
            parent = parents.get(id(node))
            if parent is None:
                return None  # not inside `root`
            out.append((parent, node))
            node = parent
        return out

    # Each fact as the enclosing blocks decide it; INHERIT: they do not, the function's entry does.
    def _grad_off(self, ancestors: Ancestors, fn: cst.FunctionDef | None) -> object:
        for parent, child in ancestors:
            if type(parent) is cst.With and child is parent.body:
                for item in reversed(parent.items):
                    mode = grad_mode(item.item, self.ctx.qualname)
                    if mode is not KEPT:
                        return mode
        for d in fn.decorators if fn is not None else ():
            mode = grad_mode(d.decorator, self.ctx.qualname)
            if mode is not KEPT:
                return mode
        return INHERIT

    def _no_grad(self, ancestors: Ancestors, fn: cst.FunctionDef | None) -> object:
        mode = self._grad_off(ancestors, fn)
        return mode if mode is INHERIT else mode is True

    def _frequency(self, ancestors: Ancestors, fn: cst.FunctionDef | None) -> object:
        for parent, child in ancestors:
            t = type(parent)
            if t is cst.For or t is cst.While:
                if child is parent.body:  # type: ignore[attr-defined]
                    return Frequency.EVERY
            elif t is cst.If:
                if child is not parent.test and not _main_guard(parent):  # type: ignore[arg-type, attr-defined]
                    return Frequency.CONDITIONAL
            elif t is cst.ExceptHandler:
                return Frequency.CONDITIONAL
            elif t is cst.IfExp:
                if child is not parent.test:  # type: ignore[attr-defined]
                    return Frequency.CONDITIONAL
            elif t is cst.BooleanOperation:
                if child is parent.right:  # type: ignore[attr-defined]
                    return Frequency.CONDITIONAL
        return INHERIT

    def _cuda(self, ancestors: Ancestors, fn: cst.FunctionDef | None, tests: DeviceGuardTest | None = None) -> object:
        tests = tests or self.tests
        for parent, child in ancestors:
            if type(parent) in (cst.If, cst.IfExp, cst.While) and child is not parent.test:  # type: ignore
                if tests(parent.test) or (fn is not None and self._chosen(parent.test, fn, tests)):  # type: ignore
                    return True
            block = _block_of(parent)
            if block is not None:
                for stmt in block:
                    if stmt is child:
                        break
                    if self.cuda.statement(stmt):
                        return True
        if fn is not None and any(tests(d.decorator) for d in fn.decorators):
            return True
        return INHERIT

    def _chosen(self, test: cst.BaseExpression, fn: cst.FunctionDef, tests: DeviceGuardTest) -> bool:
        chain = self._chain(fn)
        cls = chain[-1] if chain and type(chain[-1]) is cst.ClassDef else None
        return tests.chosen_by_caller(test, fn, cls)

    def _cuda_checked(self, ancestors: Ancestors, fn: cst.FunctionDef | None) -> object:
        """`cuda` at a call site: a guard there must check the device itself (no command-line flag)."""
        return self._cuda(ancestors, fn, self.checks)

    def _rank0(self, ancestors: Ancestors, fn: cst.FunctionDef | None) -> object:
        for parent, child in ancestors:
            if type(parent) is cst.If and child is parent.body:
                if rank_zero_test(self.ctx, None, parent.test, 0, lambda e: self._kind(e, fn)):
                    return True
        return INHERIT

    def _process_group(self, ancestors: Ancestors, fn: cst.FunctionDef | None) -> object:
        for parent, child in ancestors:
            block = _block_of(parent)
            for stmt in block or ():
                if stmt is child:
                    break
                if self.process_group.statement(stmt):
                    return True
        return INHERIT

    def _kind(self, expr: cst.BaseExpression, fn: cst.FunctionDef | None) -> Kind:
        sem = self.ctx.semantics
        chain = self._chain(fn) if fn is not None else ()
        scope = (
            sem.scope_of_chain((*chain, fn))
            if fn is not None and chain is not None
            else sem.scope_for(self.ctx.module, None)
        )
        return sem.infer(expr, scope)


def _main_guard(node: cst.If) -> bool:
    return is_main_guard(node.test)


def _block_of(node: cst.CSTNode) -> list[cst.BaseStatement] | None:
    """The statements of an indented block or the module (for the statements before a point)."""
    if type(node) is cst.IndentedBlock or type(node) is cst.Module:
        return list(node.body)
    return None
