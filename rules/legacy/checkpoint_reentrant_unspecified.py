"""TL705 checkpoint-reentrant-unspecified: torch.utils.checkpoint without use_reentrant="""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.call_binding import bind, signature
from torchlint.engine.core.callargs import with_keyword
from torchlint.engine.rule import UNSAFE, Invalid, Replace, Rule, fix
from torchlint.findings import Severity

from ._signatures import TORCH


class CheckpointReentrantUnspecified(Rule):
    code = "TL705"
    analyses = frozenset({Analysis.TORCH_VERSION, Analysis.VERSION_GUARDS})
    requires = ("checkpoint",)
    version_sensitive = True
    name = "checkpoint-reentrant-unspecified"
    message = (
        "`{fn}` without `use_reentrant=`: PyTorch warns and will change the default; pass "
        "`use_reentrant=False` (the recommended implementation)"
    )
    severity = Severity.WARNING
    category = "modernisation"
    summary = "torch.utils.checkpoint without use_reentrant="
    what = "Flags `torch.utils.checkpoint.checkpoint(...)` and `checkpoint_sequential(...)` calls without `use_reentrant=`."
    why = (
        "The reentrant implementation (the historical default) does not support keyword arguments to the "
        "checkpointed function, `torch.autograd.grad`, or inputs that do not require grad — it silently "
        "produces no gradients for the parameters inside when no input requires grad. PyTorch now asks "
        "you to choose explicitly."
    )
    example = "from torch.utils.checkpoint import checkpoint\n\nh = checkpoint(block, x)\n"
    fix_example = "from torch.utils.checkpoint import checkpoint\n\nh = checkpoint(block, x, use_reentrant=False)\n"
    fix_safety = (
        "Unsafe: `use_reentrant=False` is the recommended implementation and supports more cases, but it "
        "is a different implementation: where the reentrant one gave parameters no gradient (no input "
        "requiring grad), they now get one, so training can change. Code that relied on reentrant-specific "
        "behaviour should pass `use_reentrant=True` instead. The call's arguments are bound to the function's "
        "signature first: `checkpoint_sequential(f, 2, x, True)` passes it positionally (not reported), and "
        "`*args` / `**kwargs` may hold it (not reported)."
    )
    VALID = [
        "from torch.utils.checkpoint import checkpoint\nh = checkpoint(block, x, use_reentrant=False)\n",
        "from torch.utils.checkpoint import checkpoint\nh = checkpoint(block, x, **ckpt_kwargs)\n",
        "from deepspeed import checkpointing\nh = checkpointing.checkpoint(block, x)\n",
        # a branch for releases without `use_reentrant=` (before 1.11): it never runs on the target torch
        "import torch\nfrom packaging import version\nfrom torch.utils.checkpoint import checkpoint\n"
        'if version.parse(torch.__version__) < version.parse("1.11"):\n    h = checkpoint(block, x)\n'
        "else:\n    h = checkpoint(block, x, use_reentrant=False)\n",
    ]
    INVALID = [
        Invalid(
            "import torch.utils.checkpoint as cp\ny = cp.checkpoint_sequential(layers, 2, x)\n",
            line=2,
            fixed="import torch.utils.checkpoint as cp\ny = cp.checkpoint_sequential(layers, 2, x, use_reentrant=False)\n",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        q = self.ctx.qualname(node.func)
        if q not in ("torch.utils.checkpoint.checkpoint", "torch.utils.checkpoint.checkpoint_sequential"):
            return
        bound = bind(node, signature(TORCH[q]))
        if bound is None or "use_reentrant" in bound:
            return  # passed (`checkpoint_sequential(f, 2, x, False)`), or maybe in `*args` / `**kwargs`
        self.report(
            node,
            self.message.format(fn=q.rpartition(".")[2]),
            fix=fix(
                "Add `use_reentrant=False`",
                Replace(node, with_keyword(node, "use_reentrant", "False")),
                applicability=UNSAFE,
                risk="parameters may now get gradients",
            ),
        )
