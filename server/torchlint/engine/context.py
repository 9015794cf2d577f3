"""Per-file context handed to rules: the tree, shared analyses, traversal state."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, TypeVar, cast

import libcst as cst

from torchlint.engine.kinds import Kind
from torchlint.engine.loop_events import Loop, LoopAnalysis
from torchlint.engine.names import Imports
from torchlint.engine.semantics import Scope, Semantics
from torchlint.engine.walk import iter_statements

if TYPE_CHECKING:
    from torchlint.engine.rule import Report

T = TypeVar("T")


class FileContext:
    def __init__(self, path: str, text: str, module: cst.Module) -> None:
        self.path = path
        self.text = text
        self.module = module
        self.reports: list[Report] = []
        # traversal state, maintained by the runner
        self.scope: Scope | None = None
        self.classes: list[cst.ClassDef] = []
        self.functions: list[cst.FunctionDef] = []
        self.loops: list[Loop] = []
        self.withs: list[cst.With] = []
        self.top_statement: cst.CSTNode | None = None  # the module-level statement being traversed
        self._shared: dict[str, object] = {}

    # -- shared analyses (lazy) ---------------------------------------------
    @cached_property
    def imports(self) -> Imports:
        return Imports(self.module)

    @cached_property
    def semantics(self) -> Semantics:
        return Semantics(self.module, self.imports, self.text)

    @cached_property
    def loop_analysis(self) -> LoopAnalysis:
        return LoopAnalysis(self)

    def shared(self, key: str, build: Callable[[], T]) -> T:
        """A per-file analysis built on first use and shared by every rule.

        Kept on the context (not in a module-level cache) so it dies with the file.
        Each key has one builder, so the value stored under it is of that builder's type.
        """
        value = self._shared.get(key)
        if value is None:
            value = self._shared[key] = build()
        return cast(T, value)

    def qualname(self, node: cst.BaseExpression) -> str | None:
        return self.imports.qualname(node)

    def kind(self, expr: cst.BaseExpression) -> Kind:
        assert self.scope is not None, "asked during the traversal, which keeps a scope"
        return self.semantics.infer(expr, self.scope)

    def is_module_class(self, cls: cst.ClassDef) -> bool:
        return cls in self.semantics.classes

    def local_functions(self) -> dict[str, cst.FunctionDef]:
        """Functions and methods defined anywhere in the file, by bare name."""
        return {
            s.name.value: s
            for s in iter_statements(self.module.body, into_functions=True)
            if isinstance(s, cst.FunctionDef)
        }

    # -- traversal state ----------------------------------------------------
    @property
    def current_class(self) -> cst.ClassDef | None:
        return self.classes[-1] if self.classes else None

    @property
    def current_function(self) -> cst.FunctionDef | None:
        return self.functions[-1] if self.functions else None

    @property
    def in_module_class(self) -> bool:
        """Directly inside a method of an nn.Module subclass."""
        fn, cls = self.current_function, self.current_class
        return (
            fn is not None
            and cls is not None
            and self.scope is not None
            and self.scope.parent is not None
            and self.scope.parent.node is cls
            and self.is_module_class(cls)
        )

    def under_call(self, *qualnames: str) -> bool:
        """Inside a `with <qualname>(...)` block or a function decorated with it."""
        for w in self.withs:
            for item in w.items:
                expr = item.item.func if isinstance(item.item, cst.Call) else item.item
                if self.qualname(expr) in qualnames:
                    return True
        for fn in self.functions:
            for d in fn.decorators:
                expr = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
                if self.qualname(expr) in qualnames:
                    return True
        return False
