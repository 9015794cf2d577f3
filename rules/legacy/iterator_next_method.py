"""TL707 iterator-next-method: `it.next()` on an iterator (Python 2's spelling of `next(it)`)"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.flow.graph_flow import body_of
from torchlint.engine.rule import SAFE, Invalid, Replace, Rule, fix
from torchlint.engine.semantic.api_changes import LOADER_ITERATOR_NEXT_ALIAS_REMOVED
from torchlint.engine.semantic.kinds import Kind
from torchlint.findings import Severity

# DataLoader iterators kept a `next = __next__` alias for Python 2 until torch 1.13.


class IteratorNextMethod(Rule):
    code = "TL707"
    analyses = frozenset(
        {
            Analysis.CALL_SITES,
            Analysis.GRAPH_BODIES,
            Analysis.KINDS,
            Analysis.OWN_SUMMARY,
            Analysis.SCOPES,
            Analysis.TORCH_VERSION,
        }
    )
    requires = (".next()",)
    version_sensitive = True
    name = "iterator-next-method"
    message = "`{expr}.next()`: {what} has no `.next()` method in Python 3 (AttributeError); use `next({expr})`"
    severity = Severity.ERROR
    category = "correctness"
    summary = "`it.next()` on an iterator made by `iter(...)` (a DataLoader's included)"
    what = (
        "Flags `.next()` called on an iterator the code itself made with the builtin `iter(...)` — "
        "`it = iter(loader)` then `it.next()`, or `iter(loader).next()` — when every assignment of the name in "
        "its function is such an iterator. For a DataLoader's iterator it is reported when the project targets "
        "torch 1.13 or later (older DataLoader iterators kept a Python 2 alias); for any other iterable, "
        "always. Silent on `.next()` of anything else (a parameter, a project class, a generator of unknown "
        "origin may define its own `next`)."
    )
    why = (
        "Python 3 renamed the iterator protocol's `next()` method to `__next__()`; the builtin `next(it)` "
        "calls it. Python 2 tutorials wrote `data_iter.next()`, which raises `AttributeError: "
        "'_SingleProcessDataLoaderIter' object has no attribute 'next'` on current PyTorch."
    )
    example = """\
from torch.utils.data import DataLoader

loader = DataLoader(dataset, batch_size=64)
data_iter = iter(loader)
images, labels = data_iter.next()
"""
    fix_example = """\
from torch.utils.data import DataLoader

loader = DataLoader(dataset, batch_size=64)
data_iter = iter(loader)
images, labels = next(data_iter)
"""
    fix_safety = "Safe: `next(it)` is what `it.next()` meant; the builtin calls the iterator's `__next__`."
    VALID = [
        # the builtin, already
        "from torch.utils.data import DataLoader\nit = iter(DataLoader(ds))\nbatch = next(it)\n",
        # a class of the project may define `next`
        "class Cursor:\n    def next(self):\n        return 1\nc = Cursor()\nc.next()\n",
        # a parameter: nothing proves what it is
        "def step(it):\n    return it.next()\n",
        # the name is rebound to something else in the function
        "it = iter(xs)\nif reset:\n    it = make_cursor()\nit.next()\n",
        # a local `iter` that is not the builtin
        "def iter(x):\n    return Cursor(x)\nit = iter(xs)\nit.next()\n",
    ]
    INVALID = [
        Invalid(
            """\
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=8)
data_iter = iter(loader)
images, labels = data_iter.next()
""",
            line=4,
            fixed="""\
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=8)
data_iter = iter(loader)
images, labels = next(data_iter)
""",
        ),
        Invalid(
            "def first(rows):\n    it = iter([r for r in rows])\n    return it.next()\n",
            line=3,
            fixed="def first(rows):\n    it = iter([r for r in rows])\n    return next(it)\n",
        ),
        Invalid(
            "import torch\nx, y = iter(torch.utils.data.DataLoader(ds)).next()\n",
            line=2,
            fixed="import torch\nx, y = next(iter(torch.utils.data.DataLoader(ds)))\n",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "next" or node.args:
            return
        what = self._iterator(func.value)
        if what is None:
            return
        expr = self.ctx.module.code_for_node(func.value)
        edit = None
        if self.ctx.builtin(cst.Name("next")):
            edit = fix(f"Use `next({expr})`", Replace(node, f"next({expr})"), applicability=SAFE)
        self.report(node, self.message.format(expr=expr, what=what), fix=edit)

    def _iterator(self, expr: cst.BaseExpression) -> str | None:
        """What iterator `expr` is proven to be ("a DataLoader iterator"), else None."""
        if isinstance(expr, cst.Call):
            return self._made_by_iter(expr)
        if not isinstance(expr, cst.Name):
            return None
        defs = body_of(self.ctx).defs.get(expr.value, ())
        whats = [self._made_by_iter(d.value) if isinstance(d.value, cst.Call) else None for d in defs]
        if not whats or None in whats:
            return None
        return whats[0] if len(set(whats)) == 1 else "the iterator"

    def _made_by_iter(self, call: cst.Call) -> str | None:
        if self.ctx.builtin(call.func) != "iter" or len(call.args) != 1 or call.args[0].star:
            return None
        kind = self.ctx.kind(call.args[0].value)
        if kind & Kind.DATALOADER:
            return (
                "a DataLoader iterator" if self.ctx.torch_version.pair >= LOADER_ITERATOR_NEXT_ALIAS_REMOVED else None
            )
        if not kind and self.ctx.torch_version.pair < LOADER_ITERATOR_NEXT_ALIAS_REMOVED:
            return None  # may be a DataLoader, whose iterator still had the alias
        return "the iterator"
