"""TL710 removed-api: a torch function that was removed and now raises when called"""

from __future__ import annotations

from typing import ClassVar

from torchlint.engine.rule import Invalid
from torchlint.findings import Severity
from torchlint.rules.legacy.deprecated_or_removed_api import DeprecatedOrRemovedApi, Replacement, _migrate

# Still importable on current torch, but calling them raises RuntimeError ("... is now removed").
_REMOVED: dict[str, Replacement] = {
    "torch.solve": Replacement("torch.linalg.solve(A, B) (note the swapped arguments)"),
    "torch.symeig": Replacement("torch.linalg.eigh"),
    "torch.eig": Replacement("torch.linalg.eig"),
    "torch.lstsq": Replacement("torch.linalg.lstsq(A, B) (note the swapped arguments)"),
    "torch.matrix_rank": Replacement("torch.linalg.matrix_rank", rewrite=_migrate("linalg.matrix_rank")),
}


class RemovedApi(DeprecatedOrRemovedApi):
    """TL701's lookup and fixes over the table of removed functions: a crash, not a deprecation."""

    code = "TL710"
    table: ClassVar[dict[str, Replacement]] = _REMOVED
    status = "removed (it raises at run time)"
    requires = tuple({q.rpartition(".")[2] for q in _REMOVED})
    name = "removed-api"
    severity = Severity.ERROR
    category = "correctness"
    summary = "A removed torch function: the call raises on current PyTorch"
    what = (
        "Flags calls to torch functions that PyTorch removed but still exposes as stubs that raise "
        "(`torch.solve`, `torch.symeig`, `torch.eig`, `torch.lstsq`, `torch.matrix_rank`) — TorchFix's "
        "TOR001/TOR004."
    )
    why = (
        "These names still import, so nothing fails until the line runs: then it raises `RuntimeError: This "
        "function was deprecated since version 1.9 and is now removed`, typically deep into a run. Their "
        "`torch.linalg` replacements are not all renames (`linalg.solve` and `linalg.lstsq` swap the "
        "arguments, `linalg.eigh` returns eigenvectors by default)."
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
    ]
    INVALID = [
        Invalid("import torch\nx = torch.solve(b, A)\n", line=2),
        Invalid("from torch import symeig\ne, v = symeig(a, eigenvectors=True)\n", line=2),
        Invalid(
            "import torch\nr = torch.matrix_rank(a)\n",
            line=2,
            fixed="import torch\nr = torch.linalg.matrix_rank(a)\n",
        ),
    ]
