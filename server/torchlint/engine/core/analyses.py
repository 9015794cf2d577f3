"""The shared analyses a rule may read, by name: the registry `Rule.analyses` declares from.

A rule declares the analyses it reads (as Fixit's rules declare their METADATA_DEPENDENCIES), counting
those the engine's helpers it calls read for it: `TensorKeptWithGraph` reads the graph flow of a body
(GRAPH_BODIES) and the kinds of values (KINDS), and the graph flow reads the call index. The FileContext
builds each analysis on the first question, once per file, and only then: a file no selected rule asks
about is never indexed. With `FileContext.allowed` set (the tests set it to a rule's declaration), asking
for an undeclared analysis raises `AnalysisNotDeclared`; tests/engine/test_analysis_registry.py runs
every rule alone on its examples and fixtures that way, so a declaration cannot fall behind its rule.

This module names the analyses only: it imports nothing of the engine (it sits in the lowest layer, so
`rule.py` and the rules name it without reaching up), and the context consults it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable


class Analysis(str, enum.Enum):
    """A shared analysis of the file being linted; the value is the FileContext member that holds it."""

    PROJECT = "project"  # the project index: other files' summaries, module lookups, whole-project scans
    TORCH_VERSION = "torch_version"  # the torch release the project targets
    VERSION_GUARDS = "version_guards"  # `if` tests on torch.__version__ at the target torch
    IS_PROGRAM = "is_program"  # a script that runs, not a module others import
    OWN_SUMMARY = "own_summary"  # this file's `ast` summary, as other files see it
    CALL_SITES = "call_sites"  # every call of the file and where it sits
    LOCAL_FUNCTIONS = "_local_functions"  # the file's functions by name
    KINDS = "kinds"  # what a name or expression holds (ctx.kind / builtin / is_module_class)
    VALUES = "values"  # which call built the value a name holds at a use
    DEVICE_MOVES = "device_moves"  # where models and tensors were moved
    SCOPES = "scopes"  # which scope binds a name (Python's rules)
    CALLING_CONTEXTS = "calling_contexts"  # grad mode, frequency, CUDA, rank 0 of a point, over its callers
    CHECKPOINT_CONSUMERS = "checkpoint_consumers"  # where a state dict is saved and who loads it back
    HOST_VALUES = "host_values"  # tensors a function only uses as Python numbers
    LOSS_FEEDS = "loss_feeds"  # loss calls fed by an activation
    GRAPH_BODIES = "graph_bodies"  # def-use and autograd facts of a function body (graph_flow)
    EVALUATION_HELPERS = "evaluation_helpers"  # functions a call may run validation through
    LOOP_ANALYSIS = "loop_analysis"  # the ordered events of a training loop's iteration
    FORWARD_ARGUMENTS_LEFT_UNMOVED = "forward_arguments_left_unmoved"  # arguments `forward` moves or keeps on CPU
    STAYS_ON_CPU = "stays_on_cpu"  # a program that never names an accelerator
    SETS_DEFAULT_DEVICE = "sets_default_device"  # the program may call torch.set_default_device
    # what rules used to read off the tree or the text themselves (issue 25 item 3)
    STATEMENT_CALLS = "statement_calls"  # calls made as statements of their own, run for their effect
    GRAD_SWITCHES = "grad_switches"  # where the file switches `requires_grad`, and of what
    LAYOUT = "layout"  # each statement's indentation; a statement re-rendered inside a new block
    # what rules read of the module tree, the source text or other files' trees (issue 25 item 3)
    BUILT_CLASSES = "built_classes"  # the class a call instantiates (any project file) and what is known of it
    SAVED_CHECKPOINTS = "saved_checkpoints"  # the project's torch.save calls and save helpers, by path
    NAME_NODES = "name_nodes"  # every name read or bound in a function (or the module), by identifier
    RUN_ON_IMPORT = "run_on_import"  # this file's functions that run when it is imported
    IS_NOTEBOOK = "is_notebook"  # a notebook, or a script of `# %%` cells


# What the engine builds for every file whatever the rules (the traversal keeps a scope, which needs the
# semantic model's scopes, the imports, the file's location and which project it is in; the scopes are read
# from the file's own `ast` summary, so SCOPES and OWN_SUMMARY are built for every file that defines a
# function or class; what the project index reads of other files is read on questions of the declared
# analyses): never declared.
ALWAYS = frozenset({"location", "project", "imports", "semantics", "scopes", "own_summary"})


class AnalysisNotDeclared(RuntimeError):
    """A rule read an analysis it does not declare in `Rule.analyses`."""


def members(analyses: Iterable[Analysis]) -> frozenset[str]:
    """The FileContext members `analyses` stand for, with those built for every file."""
    return ALWAYS | {a.value for a in analyses}
