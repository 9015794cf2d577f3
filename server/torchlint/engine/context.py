"""Per-file context handed to rules: the tree, shared analyses, traversal state."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

import libcst as cst

from torchlint.engine.core.analyses import Analysis, AnalysisNotDeclared
from torchlint.engine.core.layout import Layout
from torchlint.engine.core.walk import block_statements, iter_nodes, iter_statements
from torchlint.engine.flow.blocks import Loop
from torchlint.engine.flow.calling_context import CallingContexts, Context
from torchlint.engine.flow.graph_flow import Body
from torchlint.engine.flow.loop_events import LoopAnalysis
from torchlint.engine.flow.run_on_import import run_on_import
from torchlint.engine.semantic import call_sites
from torchlint.engine.semantic.call_sites import CallSites
from torchlint.engine.semantic.host_values import HostValues
from torchlint.engine.semantic.kinds import Kind
from torchlint.engine.semantic.name_nodes import NameNodes
from torchlint.engine.semantic.names import Imports, is_main_guard
from torchlint.engine.semantic.project import Dependencies, ModuleSummary, Project, project_for, summarize
from torchlint.engine.semantic.scopes import Scopes
from torchlint.engine.semantic.semantics import Scope, Semantics
from torchlint.engine.semantic.target_version import TorchVersion
from torchlint.engine.semantic.target_version import resolve as resolve_version
from torchlint.engine.semantic.values import Values
from torchlint.engine.semantic.version_guards import VersionGuards, branch_taken, module_assignments
from torchlint.engine.torch import model_mode
from torchlint.engine.torch.activations import Feed, LossFeeds
from torchlint.engine.torch.built_classes import BuiltClasses
from torchlint.engine.torch.checkpoint_consumers import CheckpointConsumers
from torchlint.engine.torch.default_device import SET_DEFAULT_DEVICE, program_sets_default_device
from torchlint.engine.torch.device_moves import DeviceMoves, forward_arguments_left_unmoved
from torchlint.engine.torch.grad_switches import GradSwitches
from torchlint.engine.torch.grad_switches import read as read_grad_switches
from torchlint.engine.torch.saved_checkpoints import SavedCheckpoints

# What a script builds at top level (a library module builds none of these on import).
_PROGRAM_KINDS = Kind.MODEL | Kind.OPTIMIZER | Kind.DATALOADER | Kind.SAMPLER

if TYPE_CHECKING:
    from torchlint.engine.rule import Report

T = TypeVar("T")


class analysis(cached_property[T]):  # a decorator, named as the cached_property it is
    """A shared analysis of the file (core.analyses.Analysis): built on the first question, once, after the
    context has checked that the rules linting may ask for it (`FileContext.allowed`). Later questions read
    the instance's dict and never come here."""

    def __get__(self, instance: object, owner: type | None = None) -> T:  # type: ignore[override]
        if instance is not None and self.attrname not in instance.__dict__:
            cast(FileContext, instance).asked_for(cast(str, self.attrname))
        return super().__get__(instance, owner)


class FileContext:
    def __init__(
        self,
        path: str,
        text: str,
        module: cst.Module,
        torch_version: str | None = None,
        call_site_parts: call_sites.Parts | None = None,
    ) -> None:
        self.path = path
        self._torch_version = torch_version
        self._call_site_parts = call_site_parts  # kept by the server's incremental parser across edits
        self.text = text
        self.module = module
        self.reports: list[Report] = []
        self.read = Dependencies()  # what this lint read of its project (the runner records into it)
        # traversal state, maintained by the runner
        self.scope: Scope | None = None
        self.classes: list[cst.ClassDef] = []
        self.functions: list[cst.FunctionDef] = []
        self.loops: list[Loop] = []
        self.loops_at_function: list[int] = []  # len(loops) when each of `functions` was entered
        self.withs: list[cst.With] = []
        self.top_statement: cst.CSTNode | None = None  # the module-level statement being traversed
        self.statement: cst.SimpleStatementLine | None = None  # the statement line being traversed, if any
        self.blocks: list[Sequence[cst.BaseStatement]] = []  # the indented blocks around it, innermost last
        self.ifs: list[cst.If] = []  # the `if`/`elif` statements around it (branch guards), innermost last
        # The analyses (FileContext members, core.analyses.members) the rules may ask for: None, any; the
        # tests set a rule's declaration. `asked`, when a set, collects the analyses asked for.
        self.allowed: frozenset[str] | None = None
        self.asked: set[str] | None = None

    def asked_for(self, member: str) -> None:
        """Check (and note) a question about an analysis: see core/analyses.py."""
        if self.asked is not None:
            self.asked.add(member)
        if self.allowed is not None and member not in self.allowed:
            raise AnalysisNotDeclared(f"`{member}` is not among the analyses the rule declares")

    # -- shared analyses (lazy) ---------------------------------------------
    @analysis
    def project(self) -> Project | None:
        """The project this file belongs to (None for a snippet or an unsaved buffer)."""
        return project_for(self.path)

    def release(self) -> None:
        """Drop everything the lint built. The analyses refer to one another and to this context
        (scopes to their Semantics, shared analyses to the context): cycles only the garbage
        collector could free, and with them the file's tree. Broken here, the lint's memory goes
        as soon as it ends, so the server and the CLI can keep the collector out of the way."""
        semantics = self.__dict__.get("semantics")
        if semantics is not None:
            semantics.release()
        self.__dict__.clear()

    def dependencies(self) -> tuple[str, ...]:
        """The other project files whose contents this file's findings depend on, and the token scans of the
        whole project they came from (`Project.scan_dependency`)."""
        if "project" not in self.__dict__ or self.project is None:
            return ()
        here = self.location
        files = sorted(str(p) for p in self.read.consulted if p != here)
        return (*files, self.project.scan_dependency) if self.read.scanned else tuple(files)

    @analysis
    def location(self) -> Path:
        """The file's resolved path (asked by several analyses: resolving costs a system call a folder)."""
        return Path(self.path).resolve()

    @analysis
    def torch_version(self) -> TorchVersion:
        """The torch release the project targets (see target_version.py)."""
        if self._torch_version is not None or self.project is None:
            return resolve_version(None, self._torch_version)
        return self.project.torch_version

    @analysis
    def version_guards(self) -> VersionGuards:
        """`if` tests on torch.__version__, evaluated at the target torch (version_guards.py)."""
        return VersionGuards(self.torch_version.pair, self.qualname, module_assignments(self.module))

    def runs_on_target(self) -> bool:
        """False inside a branch that a version guard never takes on the target torch (traversal state)."""
        for guard in self.ifs:
            taken = branch_taken(guard, self.blocks)
            if taken is not None and self.version_guards.holds(guard.test) not in (None, taken):
                return False
        return True

    @analysis
    def is_program(self) -> bool:
        """A script or notebook that runs (not a module others import): judged as a whole program."""
        if self.path.endswith(".ipynb") or ".ipynb:" in self.path:
            return True
        scope = self.semantics.scope_for(self.module, None)
        for stmt in self.module.body:
            if isinstance(stmt, (cst.For, cst.While, cst.With)):
                return True
            if isinstance(stmt, cst.If) and is_main_guard(stmt.test):
                return True
            if isinstance(stmt, cst.SimpleStatementLine) and any(
                isinstance(n, cst.Call) and self._runs_training(n, scope) for n in iter_nodes(stmt)
            ):
                return True
        return False

    def _runs_training(self, call: cst.Call, scope: Scope) -> bool:
        """A top-level call that builds training objects or runs this file's own functions (`main()`)."""
        if self.semantics.infer(call, scope) & _PROGRAM_KINDS:
            return True
        return isinstance(call.func, cst.Name) and call.func.value in self.semantics.functions()

    def program_calls(self, *names: str) -> bool:
        """Whether the program this file belongs to calls a function or method named one of `names`.

        A program: this file and the project modules it imports. A library module: also every
        project file, since its callers are where setup (a process group, `set_epoch`) lives.
        """
        if self.file_calls(*names):
            return True
        project = self.project
        if project is None:
            return not self.is_program  # a library snippet: nothing proves the setup is missing
        here = self.location
        modules = project.imported_by(here, self.imports.table)
        if any(m.called.intersection(names) for m in modules):
            return True
        if self.is_program:
            return False
        callers: list[ModuleSummary] = []
        for n in names:
            found = project.calling(n)
            if found is None:
                return True  # the project's files are unknown: nothing proves the setup is missing
            callers += found
        importers = [s for s in callers if here in {m.path for m in project.imported_by(s.path, s.imports)}]
        # Judged with its callers: those that import it, else (no importer found) any that could.
        return bool(importers) or (bool(callers) and project.importers(here) == [])

    def file_calls(self, *names: str) -> bool:
        """Whether this file calls a function or method named one of `names` (its summary's calls; a text
        CPython cannot parse is taken to call them)."""
        if not any(n in self.text for n in names):
            return False  # cheapest first: most files name none of them
        summary = self.own_summary
        return summary is None or not summary.called.isdisjoint(names)

    @analysis
    def own_summary(self) -> ModuleSummary | None:
        """This file's `ast` summary (classes, calls), as the project index would make it: made once
        per file, not at every question (None when CPython cannot parse the text)."""
        path = Path(self.path)
        name, package = self.project.module_name(self.location) if self.project is not None else ("", "")
        return summarize(path, name, package, self.text)

    @analysis
    def imports(self) -> Imports:
        project = self.project
        package = project.package_of(self.location) if project is not None else None
        return Imports(self.module, package)

    @analysis
    def semantics(self) -> Semantics:
        folder = self.location.parent if self.project is not None else None
        return Semantics(
            self.module,
            self.imports,
            self.project,
            folder,
            lambda: self.call_sites,
            scopes=lambda: self.scopes,
            summary=lambda: self.own_summary,
        )

    @analysis
    def call_sites(self) -> CallSites:
        """Every call of the file and where it sits (one walk, on the first question)."""
        return call_sites.index(self.module, self._call_site_parts)

    @analysis
    def values(self) -> Values:
        """Which call built what a name or `self.attr` holds at a use (values.py)."""
        return Values(self.module, self.imports, lambda: self.call_sites)

    @analysis
    def device_moves(self) -> DeviceMoves:
        """Where models and tensors were moved (device_moves.py)."""
        return DeviceMoves(self.module, self.imports, self.scopes, self.semantics, lambda: self.call_sites)

    @analysis
    def scopes(self) -> Scopes:
        """Which scope binds a name read in a given scope: Python's rules (scopes.py)."""
        return Scopes(self.module, self.semantics.inference.facts)

    @analysis
    def calling_contexts(self) -> CallingContexts:
        """Each function's context joined over its callers, in this file and the project (calling_context.py)."""
        return CallingContexts(self)

    def context_at(self, node: cst.CSTNode) -> Context:
        """In what context `node` runs: grad mode, frequency, CUDA known, rank 0 (traversal state: `node` lies
        in the innermost function being traversed, or at module level)."""
        return self.calling_contexts.at(node, self.current_function)

    @analysis
    def checkpoint_consumers(self) -> CheckpointConsumers:
        """Where a state dict is saved and which project loaders read it back (checkpoint_consumers.py)."""
        return CheckpointConsumers(self)

    @analysis
    def host_values(self) -> HostValues:
        """Tensors a function only uses as Python numbers: indices, slice bounds, sizes (host_values.py)."""
        return HostValues(self)

    @analysis
    def loss_feeds(self) -> list[Feed]:
        """The file's loss calls fed by an activation (activations.py)."""
        return LossFeeds(self).feeds()

    @analysis
    def graph_bodies(self) -> dict[cst.FunctionDef | cst.Module, Body]:
        """The def-use reading of each body asked about so far (graph_flow.body_for fills it)."""
        return {}

    @analysis
    def evaluation_helpers(self) -> model_mode.EvaluationHelpers:
        """The functions a call may run validation through (model_mode.EvaluationHelpers: `name in helpers`)."""
        return model_mode.EvaluationHelpers(self)

    @analysis
    def loop_analysis(self) -> LoopAnalysis:
        return LoopAnalysis(self)

    @analysis
    def forward_arguments_left_unmoved(self) -> tuple[set[int], set[str]]:
        """Model-call argument slots a caller need not move: `forward` keeps them on the CPU or moves them
        itself (see device_moves)."""
        summaries = [self.semantics.inference.summary]
        if self.project is not None:
            summaries += self.project.imported_by(self.location, self.imports.table)
        return forward_arguments_left_unmoved(summaries)

    @analysis
    def stays_on_cpu(self) -> bool:
        """A program that never names an accelerator: no device move or device argument in this file or
        the project modules it imports, and no project file imports it (then its callers might)."""
        if not self.is_program or _ACCELERATOR.search(self.text):
            return False  # cheapest first: most training scripts name their device themselves
        project = self.project
        if project is None:
            return True
        here = self.location
        if project.importers(here) != []:  # imported, or unknown (None): its callers might name one
            return False
        return not any(_ACCELERATOR.search(m.text) for m in project.imported_by(here, self.imports.table))

    @analysis
    def sets_default_device(self) -> bool:
        """The program may call `torch.set_default_device`: factories then need not allocate on the CPU
        (default_device.py)."""
        calls_it = self.file_calls(SET_DEFAULT_DEVICE)
        return program_sets_default_device(calls_it, self.project, self.location, self.imports.table, self.is_program)

    # what rules used to read off the tree or the text themselves (issue 25 item 3)
    @analysis
    def statement_calls(self) -> list[cst.Call]:
        """Calls made as statements of their own, anywhere in the file (call_sites.statement_calls)."""
        return call_sites.statement_calls(self.module)

    @analysis
    def grad_switches(self) -> GradSwitches:
        """Where the file switches `requires_grad`, and of what (grad_switches.py)."""
        return read_grad_switches(self.module, self.text)

    @analysis
    def layout(self) -> Layout:
        """Each statement's indentation, and a statement re-rendered inside a new block (layout.py)."""
        return Layout(self.module)

    # -- what rules read of the module tree, the source text or other files' trees (issue 25 item 3) -------
    @analysis
    def built_classes(self) -> BuiltClasses:
        """The class a call instantiates, this file's or a project file's, and what is known of it (built_classes.py)."""
        return BuiltClasses(self.semantics, Path(self.path))

    @analysis
    def saved_checkpoints(self) -> SavedCheckpoints:
        """The project's `torch.save` calls by path, and save helpers (saved_checkpoints.py)."""
        return SavedCheckpoints(
            self.project, self.location, lambda: self.own_summary, self.qualname, self.semantics.folder
        )

    @analysis
    def name_nodes(self) -> NameNodes:
        """Every name of a function (or the module) by identifier, one walk per function asked (name_nodes.py)."""
        return NameNodes(self.module)

    @analysis
    def run_on_import(self) -> dict[str, str]:
        """This file's functions that run when it is imported, each with the module-level call that starts
        them (run_on_import.py)."""
        return run_on_import(self.module, self.local_functions())

    @analysis
    def is_notebook(self) -> bool:
        """A notebook, or a script of `# %%` cells (jupytext's percent format): run interactively, cell by cell."""
        return ".ipynb" in self.path or self.text.startswith("# %%") or "\n# %%" in self.text

    def qualname(self, node: cst.BaseExpression) -> str | None:
        return self.imports.qualname(node)

    def _asked_for_kinds(self) -> None:
        if self.allowed is not None or self.asked is not None:
            self.asked_for(Analysis.KINDS.value)

    def kind(self, expr: cst.BaseExpression) -> Kind:
        self._asked_for_kinds()
        assert self.scope is not None, "asked during the traversal, which keeps a scope"
        return self.semantics.infer(expr, self.scope)

    def builtin(self, func: cst.BaseExpression) -> str | None:
        """The builtin `func` calls (`iter`, `len`, `list`): a bare name nothing in the file rebinds."""
        self._asked_for_kinds()
        if not isinstance(func, cst.Name) or func.value in self.imports.table:
            return None
        name = func.value
        assert self.scope is not None, "asked during the traversal, which keeps a scope"
        if self.scope.lookup(name) is not None or name in self.semantics.functions():
            return None
        return None if name in self.semantics.classes.by_name else name

    def is_module_class(self, cls: cst.ClassDef) -> bool:
        self._asked_for_kinds()
        return cls in self.semantics.classes

    def local_functions(self) -> dict[str, cst.FunctionDef]:
        """Functions and methods defined anywhere in the file, by bare name (the last definition of a name);
        made once, from the call index's list of them (do not change it)."""
        return self._local_functions

    @analysis
    def _local_functions(self) -> dict[str, cst.FunctionDef]:
        if "call_sites" in self.__dict__:  # the call index lists them, in the same order
            return {name: defs[-1][0] for name, defs in self.call_sites.functions.items()}
        return {  # else a walk of the statements only: cheaper than indexing every call for it
            s.name.value: s
            for s in iter_statements(self.module.body, into_functions=True)
            if type(s) is cst.FunctionDef
        }

    # -- traversal state ----------------------------------------------------
    @property
    def current_class(self) -> cst.ClassDef | None:
        return self.classes[-1] if self.classes else None

    @property
    def current_function(self) -> cst.FunctionDef | None:
        return self.functions[-1] if self.functions else None

    @property
    def scope_node(self) -> cst.CSTNode:
        """The function, class or module whose body is being traversed: where a name read here resolves."""
        return self.scope.node if self.scope is not None else self.module

    @property
    def own_loops(self) -> list[Loop]:
        """The loops around the point being traversed inside its innermost function (all of them at module
        level): the loops of the step that function runs."""
        return self.loops[self.loops_at_function[-1] :] if self.loops_at_function else self.loops

    @property
    def body_statements(self) -> Sequence[cst.BaseStatement]:
        """The statements of the innermost function being traversed (the module's at top level): the body
        whose statements the flow analyses read in order (graph_flow's Body, blocks.statements)."""
        fn = self.current_function
        return self.module.body if fn is None else block_statements(fn.body)

    @property
    def block(self) -> Sequence[cst.BaseStatement]:
        """The statements of the innermost indented block being traversed (the module's at top level)."""
        return self.blocks[-1] if self.blocks else self.module.body

    @property
    def under_main_guard(self) -> bool:
        """Inside `if __name__ == "__main__":`."""
        return any(is_main_guard(i.test) for i in self.ifs)

    @property
    def under_condition(self) -> bool:
        """Inside an `if` other than the main guard: code that may not run."""
        return any(not is_main_guard(i.test) for i in self.ifs)

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


# Any of these in a program's text may put a value on an accelerator (`.to(`, `.cuda()`, `device=`,
# `torch.accelerator`, XLA, DeepSpeed, Lightning/Accelerate launchers...).
_ACCELERATOR = re.compile(r"cuda|\.to\(|device|accelerat|\bmps\b|\bxla\b|\bxpu\b|deepspeed|lightning|\bTrainer\b")
