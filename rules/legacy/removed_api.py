"""TL710 removed-api: a torch function that was removed and now raises when called"""

from __future__ import annotations

from typing import ClassVar

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.rule import Invalid
from torchlint.engine.semantic.api_changes import GONE, REMOVED, REMOVED_MODULES
from torchlint.engine.semantic.names import dotted
from torchlint.findings import Severity

from .deprecated_or_removed_api import (
    DeprecatedOrRemovedApi,
    Replacement,
    _migrate,
    with_rewrites,
)

_REMOVED = with_rewrites(REMOVED, {"torch.matrix_rank": _migrate("linalg.matrix_rank")})
_GONE = with_rewrites(GONE, {})
_REMOVED_MODULES = with_rewrites(REMOVED_MODULES, {})
# Handlers that make an import optional: `try: from torch._six import inf / except ImportError: ...`.
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError", "Exception", "BaseException"})


class RemovedApi(DeprecatedOrRemovedApi):
    """TL701's lookup and fixes over the table of removed functions: a crash, not a deprecation."""

    code = "TL710"
    analyses = frozenset({Analysis.TORCH_VERSION, Analysis.VERSION_GUARDS})
    table: ClassVar[dict[str, Replacement]] = {**_REMOVED, **_GONE}
    status = "removed (it raises at run time)"
    dated = False  # `since` of a removal is the first release known to lack it, not a date to state
    requires = tuple({q.rpartition(".")[2] for q in (*_REMOVED, *_GONE, *_REMOVED_MODULES)})
    version_sensitive = True
    name = "removed-api"
    _import_message = "`{old}` does not exist in torch {version}: this import raises when the program starts; use {new}"
    severity = Severity.ERROR
    category = "correctness"
    summary = "A removed torch function or module: the call or import raises on current PyTorch"
    what = (
        "Flags calls to torch functions that PyTorch removed but still exposes as stubs that raise "
        "(`torch.solve`, `torch.symeig`, `torch.eig`, `torch.lstsq`, `torch.matrix_rank`) — TorchFix's "
        "TOR001/TOR004 — and, when the project targets a torch that lacks them, removed private entry points "
        "(`torch.onnx._export`, gone by 2.5; `torch.set_deterministic` / `torch.is_deterministic`, by 2.0) and "
        "imports of removed modules: `torch._six` (removed in 2.0), `torch.distributed.pipeline` (by 2.5, "
        "replaced by `torch.distributed.pipelining`), `torch.utils.ffi`, `torch.legacy`, "
        "`torch.distributed.deprecated`. An import inside a `try` that catches `ImportError` (or "
        "`ModuleNotFoundError`, `AttributeError`, `Exception`) or under an `if` is a fallback the author "
        "expects to fail and is not flagged."
    )
    why = (
        "These names still import, so nothing fails until the line runs: then it raises `RuntimeError: This "
        "function was deprecated since version 1.9 and is now removed`, typically deep into a run. Their "
        "`torch.linalg` replacements are not all renames (`linalg.solve` and `linalg.lstsq` swap the "
        "arguments, `linalg.eigh` returns eigenvectors by default). A removed module is worse: "
        "`from torch._six import inf` raises `ModuleNotFoundError` as the program starts, and "
        "`torch.onnx._export(...)` an `AttributeError` (both checked on torch 2.13)."
    )
    example = "import torch\n\nr = torch.matrix_rank(a)\n"
    fix_example = "import torch\n\nr = torch.linalg.matrix_rank(a)\n"
    fix_safety = (
        "Safe: only `matrix_rank(a)` is rewritten (to `torch.linalg.matrix_rank(a)`, the same result). The others "
        "change argument order or return values and are left to you."
    )
    VALID = [
        "import torch\nx = torch.linalg.solve(A, b)\n",
        "import torch\nq, r = torch.qr(a)\n",  # deprecated but still runs: TL701
        "import numpy as np\nx = np.linalg.solve(A, b)\n",
        "try:\n    from torch._six import inf\nexcept ImportError:\n    from math import inf\n",
        "import torch\nif torch.__version__ < '2':\n    from torch._six import string_classes\n",
        "from torch.distributed.pipelining import pipeline\n",
    ]
    INVALID = [
        Invalid("import torch\nx = torch.solve(b, A)\n", line=2),
        Invalid("from torch import symeig\ne, v = symeig(a, eigenvectors=True)\n", line=2),
        Invalid(
            "import torch\nr = torch.matrix_rank(a)\n",
            line=2,
            fixed="import torch\nr = torch.linalg.matrix_rank(a)\n",
        ),
        Invalid("from torch._six import inf\n", line=1),
        Invalid("import torch.distributed.pipeline.sync as sync\n", line=1),
        Invalid("from torch import _six\n", line=1),
        Invalid("import torch\ntorch.onnx._export(model, x, 'm.onnx')\n", line=2),
    ]

    def visit_Module(self, node: cst.Module) -> None:
        self.optional: list[cst.BaseSuite] = []  # bodies of the enclosing `try`s that catch a failed import

    def visit_Try(self, node: cst.Try) -> None:
        caught = {dotted(n) for h in node.handlers if h.type is not None for n in (h.type, *iter_nodes(h.type))}
        if any(h.type is None for h in node.handlers) or caught & _IMPORT_ERRORS:
            self.optional.append(node.body)

    def leave_Try(self, original_node: cst.Try) -> None:
        if self.optional and self.optional[-1] is original_node.body:
            self.optional.pop()

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            self._removed_import(node, dotted(alias.name))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None:
            return
        module = dotted(node.module)
        if self._removed_import(node, module) or isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = dotted(alias.name)
            if name is not None and self._removed_import(node, f"{module}.{name}"):
                return

    def _removed_import(self, node: cst.CSTNode, module: str | None) -> bool:
        """Report an import of a removed module or function that runs whenever the file does."""
        if module is None:
            return False
        found = next(((m, r) for m, r in _REMOVED_MODULES.items() if module == m or module.startswith(m + ".")), None)
        if found is None and module in _GONE:
            found = (module, _GONE[module])
        if found is None or self.ctx.torch_version.pair < found[1].applies_from:
            return False
        if self.ctx.under_condition or any(self._within(body) for body in self.optional):
            return True  # a guarded or version-dependent import: the author expects it to fail
        old, entry = found
        self.report(node, self._import_message.format(old=old, version=self.ctx.torch_version, new=entry.use))
        return True

    def _within(self, body: cst.BaseSuite) -> bool:
        stmt = self.ctx.statement
        return stmt is not None and any(n is stmt for n in iter_nodes(body))
