"""TL701 deprecated-or-removed-api: Deprecated torch / torchvision API (removed ones are TL710)"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import libcst as cst

from torchlint.engine.call_binding import rebuild, signature
from torchlint.engine.callargs import get_arg, has_star, int_value, is_name
from torchlint.engine.kinds import Kind
from torchlint.engine.names import dotted
from torchlint.engine.rule import SAFE, UNSAFE, Invalid, Replace, Rule, fix
from torchlint.engine.walk import iter_statements, small_statements
from torchlint.findings import Severity
from torchlint.rules.legacy._helpers import legacy_reduction
from torchlint.rules.legacy._signatures import TORCH


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _positional(call: cst.Call) -> list[cst.Arg] | None:
    """The arguments if all are plain positional ones, else None."""
    if any(a.keyword is not None or a.star for a in call.args):
        return None
    return list(call.args)


def _joined(values) -> str:
    return ", ".join(_code(v) for v in values)


# -- mechanical rewrites: (call, torch alias, old qualified name) -> the new call, or None when not certain
def _migrate(
    path: str,
    *,
    leading: tuple[str, ...] = (),
    extra: tuple[tuple[str, str], ...] = (),
    same_defaults: tuple[str, ...] = (),
) -> Callable:
    """A call of `torch.<path>` with the old call's arguments bound by name (_signatures.py's data)."""

    def rewrite(call: cst.Call, torch: str, old: str) -> cst.Call | None:
        return rebuild(
            call,
            signature(TORCH[old]),
            signature(TORCH[f"torch.{path}"]),
            f"{torch}.{path}",
            leading=leading,
            extra=extra,
            same_defaults=same_defaults,
        )

    return rewrite


def _qr(call: cst.Call, torch: str, old: str) -> str | None:
    inp, some = get_arg(call, "input", 0), get_arg(call, "some", 1)
    if inp is None or len(call.args) != 1 + (some is not None):
        return None
    if some is None or is_name(some.value, "True"):
        return f"{torch}.linalg.qr({_code(inp.value)})"
    if is_name(some.value, "False"):
        return f'{torch}.linalg.qr({_code(inp.value)}, mode="complete")'
    return None


def _cholesky(call: cst.Call, torch: str, old: str) -> str | None:
    inp, upper = get_arg(call, "input", 0), get_arg(call, "upper", 1)
    if inp is None or len(call.args) != 1 + (upper is not None):
        return None
    if upper is None or is_name(upper.value, "False"):
        return f"{torch}.linalg.cholesky({_code(inp.value)})"
    if is_name(upper.value, "True"):
        return f"{torch}.linalg.cholesky({_code(inp.value)}).mH"
    return None


def _chain_matmul(call: cst.Call, torch: str, old: str) -> str | None:
    args = _positional(call)
    return f"{torch}.linalg.multi_dot([{_joined(a.value for a in args)}])" if args else None


def _range(call: cst.Call, torch: str, old: str) -> str | None:
    """torch.range(s, e, step) includes `e` and returns floats; arange excludes it and keeps int dtype."""
    args = [a for a in call.args if a.keyword is None]
    if has_star(call) or not 1 <= len(args) <= 3 or any(a.keyword and a.keyword.value != "dtype" for a in call.args):
        return None
    values = [int_value(a.value) for a in args]
    if None in values:
        return None
    start, end, step = (
        (0, values[0], 1) if len(values) == 1 else (values[0], values[1], values[2] if len(values) == 3 else 1)
    )
    if step == 0:
        return None
    new_end = end + (1 if step > 0 else -1)
    parts = [str(start), str(new_end)] + ([str(step)] if step != 1 else [])
    dtype = get_arg(call, "dtype")
    parts.append(f"dtype={_code(dtype.value)}" if dtype else f"dtype={torch}.get_default_dtype()")
    return f"{torch}.arange({', '.join(parts)})"


def _norm(call: cst.Call, torch: str, old: str) -> str | None:
    """The vector-norm cases: norm(x), norm(x, 2), norm(x, p=1, dim=1, keepdim=True)."""
    inp, p = get_arg(call, "input", 0), get_arg(call, "p", 1)
    known = {"input", "p", "dim", "keepdim"}
    if inp is None or has_star(call) or any(a.keyword and a.keyword.value not in known for a in call.args):
        return None
    if len([a for a in call.args if a.keyword is None]) > 2:
        return None
    parts = [_code(inp.value)]
    if p is not None:
        if not isinstance(p.value, (cst.Integer, cst.Float)):
            return None
        parts.append(f"ord={_code(p.value)}")
    for kw in ("dim", "keepdim"):
        arg = get_arg(call, kw)
        if arg is not None:
            parts.append(f"{kw}={_code(arg.value)}")
    return f"{torch}.linalg.vector_norm({', '.join(parts)})"


def _lu_solve(call: cst.Call, torch: str, old: str) -> str | None:
    args = _positional(call)
    if not args or len(args) != 3:
        return None
    b, lu, piv = (a.value for a in args)
    return f"{torch}.linalg.lu_solve({_code(lu)}, {_code(piv)}, {_code(b)})"


# `torch.amp.autocast`'s dtype=None and cache_enabled=None mean the device's defaults: float16 and True on
# CUDA, what `torch.cuda.amp.autocast` spelled out.
_AUTOCAST_DEVICE_DEFAULTS = ("dtype", "cache_enabled")


@dataclass(frozen=True)
class Replacement:
    use: str  # what to use instead, for the message
    rewrite: Callable | None = None
    since: tuple[int, int] = (0, 0)  # the torch release that deprecated it: silent for older targets


# Deprecated: they still run (with a warning) on current torch. Removed ones are TL710's table.
_TABLE: dict[str, Replacement] = {
    "torch.qr": Replacement("torch.linalg.qr", rewrite=_qr),
    "torch.cholesky": Replacement("torch.linalg.cholesky", rewrite=_cholesky),
    "torch.chain_matmul": Replacement("torch.linalg.multi_dot", rewrite=_chain_matmul),
    "torch.range": Replacement("torch.arange (which excludes the end)", rewrite=_range),
    "torch.norm": Replacement("torch.linalg.vector_norm / matrix_norm", rewrite=_norm),
    "torch.ger": Replacement("torch.outer", rewrite=_migrate("outer")),
    "torch.lu": Replacement("torch.linalg.lu_factor", rewrite=_migrate("linalg.lu_factor")),
    "torch.lu_solve": Replacement("torch.linalg.lu_solve(LU, pivots, B) (note the argument order)", rewrite=_lu_solve),
    "torch.svd": Replacement("torch.linalg.svd (returns Vh, not V; full_matrices replaces some)"),
    "torch.triangular_solve": Replacement("torch.linalg.solve_triangular(A, B, upper=...)"),
    "torch.nn.UpsamplingNearest2d": Replacement(
        'torch.nn.Upsample(..., mode="nearest")', rewrite=_migrate("nn.Upsample", extra=(("mode", '"nearest"'),))
    ),
    "torch.nn.UpsamplingBilinear2d": Replacement(
        'torch.nn.Upsample(..., mode="bilinear", align_corners=True)',
        rewrite=_migrate("nn.Upsample", extra=(("mode", '"bilinear"'), ("align_corners", "True"))),
    ),
    "torch.nn.functional.upsample": Replacement(
        "torch.nn.functional.interpolate", rewrite=_migrate("nn.functional.interpolate")
    ),
    "torch.testing.assert_allclose": Replacement("torch.testing.assert_close"),
    "torch.nn.utils.weight_norm": Replacement("torch.nn.utils.parametrizations.weight_norm (state_dict keys change)"),
    "torch.utils._pytree._register_pytree_node": Replacement(
        "torch.utils._pytree.register_pytree_node", rewrite=_migrate("utils._pytree.register_pytree_node")
    ),
    "torch.backends.cuda.sdp_kernel": Replacement("torch.nn.attention.sdpa_kernel"),
    "torch.cuda.amp.autocast": Replacement(
        'torch.amp.autocast("cuda", ...)',
        rewrite=_migrate("amp.autocast", leading=('"cuda"',), same_defaults=_AUTOCAST_DEVICE_DEFAULTS),
        since=(2, 4),
    ),
    "torch.cuda.amp.GradScaler": Replacement(
        'torch.amp.GradScaler("cuda", ...)', rewrite=_migrate("amp.GradScaler", leading=('"cuda"',)), since=(2, 4)
    ),
    # TorchScript: deprecated in 2.5 (its docs), warning on every call in later releases
    "torch.jit.script": Replacement("torch.compile or torch.export", since=(2, 5)),
    "torch.jit.trace": Replacement("torch.export or torch.compile", since=(2, 5)),
    "torch.jit.freeze": Replacement("torch.compile", since=(2, 5)),
    "torch.set_default_tensor_type": Replacement("torch.set_default_dtype / torch.set_default_device"),
    "torchvision.transforms.v2.ToTensor": Replacement(
        "v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])"
    ),
    # non-public aliases of public functions
    "torch.utils.data._utils.collate.default_collate": Replacement(
        "torch.utils.data.default_collate", rewrite=_migrate("utils.data.default_collate")
    ),
    "torch.utils.data._utils.collate.default_convert": Replacement(
        "torch.utils.data.default_convert", rewrite=_migrate("utils.data.default_convert")
    ),
}
_LAUNCH = "torch.distributed.launch"
_LAUNCH_DEPRECATED = (1, 10)  # torchrun's release; the module warns since
_TYPED_STORAGE_DEPRECATED = (2, 0)

for _fn in ("vmap", "grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functionalize"):
    _TABLE[f"functorch.{_fn}"] = Replacement(f"torch.func.{_fn}", rewrite=_migrate(f"func.{_fn}"))


def _imported_twice(ctx, local: str) -> bool:
    """`local` is bound by more than one import (a version fallback); the import table keeps the last."""
    sources = set()
    for stmt in iter_statements(ctx.module.body, into_functions=True):
        for small in small_statements(stmt):
            if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    bound = alias.asname.name if alias.asname is not None else alias.name
                    if isinstance(bound, cst.Name) and bound.value == local:
                        sources.add(dotted(small.module) if small.module else None)
    return len(sources) > 1


def _as_imported(ctx, node: cst.BaseExpression) -> str | None:
    """The qualified name of a name chain as its import spells it (no canonical folding)."""
    text = dotted(node)
    head, _, rest = (text or "").partition(".")
    base = ctx.imports.table.get(head)
    return None if base is None else f"{base}.{rest}" if rest else base


def _is_launch(module: str | None) -> bool:
    """`torch.distributed.launch` or a module under it (not `torch.distributed.launcher`, the elastic API)."""
    return module is not None and (module == _LAUNCH or module.startswith(_LAUNCH + "."))


def torch_alias(ctx) -> str | None:
    """The local name bound to the `torch` module (`import torch`, `import torch as T`), if any."""
    return ctx.imports.local_name("torch")


class DeprecatedOrRemovedApi(Rule):
    code = "TL701"
    table: ClassVar[dict[str, Replacement]] = _TABLE
    status = "deprecated"
    requires = tuple(
        {q.rpartition(".")[2] for q in _TABLE} | {"functorch", "launch", "storage", "size_average", "reduce"}
    )
    version_sensitive = True
    name = "deprecated-or-removed-api"
    message = "`{old}` is {status}; use `{new}`"
    severity = Severity.WARNING
    category = "modernisation"
    summary = "Deprecated torch / torchvision API that still runs (removed ones: TL710)"
    what = (
        "Flags calls to torch functions that are deprecated but still run on current PyTorch (`torch.qr`, "
        "`torch.lu`, `torch.cholesky`, `torch.chain_matmul`, `torch.range`, `torch.norm`, `torch.ger`, "
        "`functorch.*`, ...) and non-public aliases of public ones — TorchFix's "
        "TOR101/TOR103/TOR104/TOR105/TOR202 set. Keyed to the torch version the project targets (see "
        "`torch-version`), each only from the release that deprecated it: `torch.cuda.amp.autocast` / "
        '`GradScaler` (2.4; use `torch.amp.autocast("cuda")` / `torch.amp.GradScaler("cuda")`), '
        "`torch.jit.script` / `trace` / `freeze` (2.5, TorchScript; use `torch.compile` / `torch.export`), "
        "`Tensor.storage()` on a value proven to be a tensor (2.0, TypedStorage; use `untyped_storage()`), and "
        "imports of `torch.distributed.launch` (use `torchrun`; a `python -m torch.distributed.launch` command "
        "line is not Python and not checked), and the `size_average=` / `reduce=` arguments of torch losses "
        "(deprecated since 0.4.1; use `reduction=`). Functions already removed (they raise) are TL710. A "
        'modernisation rule: off by default, on with `extend-select = ["TL7"]` or `["TL701"]`.'
    )
    why = (
        "Deprecated functions warn and will be removed in a future release. "
        "Their `torch.linalg` replacements are better specified (batched, differentiable, consistent "
        "argument order) — which is also why some migrations are not a rename."
    )
    example = "import torch\n\nq, r = torch.qr(a)\n"
    fix_example = "import torch\n\nq, r = torch.linalg.qr(a)\n"
    fix_safety = (
        "Safe: offered only where the rewrite keeps behaviour: renames with identical signatures, `qr(some=)` -> "
        "`mode=`, `cholesky(upper=True)` -> `.mH`, `chain_matmul` -> `multi_dot([...])`, `range` with literal "
        "integer bounds (keeping its floating dtype), vector cases of `norm`, `lu_solve` argument order. "
        '`torch.cuda.amp.autocast(...)` / `GradScaler(...)` -> `torch.amp.autocast("cuda", ...)` / '
        '`torch.amp.GradScaler("cuda", ...)`. '
        '`size_average=` / `reduce=` given as literals -> the `reduction=` torch derives from them ("mean", '
        '"sum" or "none"), when no `reduction=` is given too. '
        "Renames and these migrations bind the old call's arguments by name "
        "to the old signature and build the new call by name (signatures kept as data, checked against the "
        'installed torch): `autocast(flag)` becomes `torch.amp.autocast("cuda", enabled=flag)`; a call whose '
        "binding is not certain (`*args`, `**kwargs`, a keyword or a positional the signature has no place for) "
        "gets no fix. "
        "Others (`solve`, `svd`, `triangular_solve`, TorchScript, ...) change return values and are left to you. "
        "Unsafe: `t.storage()` -> `t.untyped_storage()`, which counts and indexes bytes, not elements "
        "(`.size()`, `[i]` and `.tolist()` of the result change; `.data_ptr()` does not)."
    )
    VALID = [
        "import torch\nq, r = torch.linalg.qr(a)\nx = torch.arange(10)\n",
        "import numpy as np\nq, r = np.linalg.qr(a)\nn = np.linalg.norm(v)\n",
        "def qr(a):\n    return a\nqr(1)\n",
        "import torch\nn = torch.linalg.vector_norm(x, dim=1)\n",
        "try:\n    from torch.func import vmap\nexcept ImportError:\n    from functorch import vmap\nys = vmap(f)(xs)\n",
        "import torch\nx = torch.solve(b, A)\n",  # removed, not deprecated: TL710
        "import torch\nscaler = torch.amp.GradScaler('cuda')\nwith torch.autocast('cuda'):\n    y = model(x)\n",
        "from torch.distributed.launcher.api import elastic_launch\n",  # the elastic API, not the old launcher
        "s = dataset.storage()\n",  # not proven to be a tensor
        "import torch\nx = torch.zeros(4)\ns = x.untyped_storage()\n",
        "from torch import nn\ncriterion = nn.MSELoss(reduction='sum')\n",
        "import pandas as pd\ndf = pd.DataFrame(x).mean(reduce=False)\n",
    ]
    INVALID = [
        Invalid(
            "import torch\nL = torch.cholesky(A, upper=True)\n",
            line=2,
            fixed="import torch\nL = torch.linalg.cholesky(A).mH\n",
        ),
        Invalid(
            "import torch\nx = torch.range(1, 4)\n",
            line=2,
            fixed="import torch\nx = torch.arange(1, 5, dtype=torch.get_default_dtype())\n",
        ),
        Invalid(
            "import torch\nm = torch.chain_matmul(a, b, c)\n",
            line=2,
            fixed="import torch\nm = torch.linalg.multi_dot([a, b, c])\n",
        ),
        Invalid(
            "import torch\nfrom functorch import vmap\nys = vmap(f)(xs)\n",
            line=3,
            fixed="import torch\nfrom functorch import vmap\nys = torch.func.vmap(f)(xs)\n",
        ),
        Invalid("from torch import norm\nn = norm(x)\n", line=2),
        Invalid(
            "import torch\nn = torch.norm(x, 2, dim=-1)\n",
            line=2,
            fixed="import torch\nn = torch.linalg.vector_norm(x, ord=2, dim=-1)\n",
        ),
        Invalid(
            "import torch\nscaler = torch.cuda.amp.GradScaler(init_scale=1024)\n",
            line=2,
            fixed='import torch\nscaler = torch.amp.GradScaler("cuda", init_scale=1024)\n',
            torch_version="2.4",
        ),
        Invalid("import torch\ntraced = torch.jit.trace(model, example)\n", line=2, torch_version="2.5"),
        Invalid("import torch\n\n@torch.jit.script\ndef f(x):\n    return x + 1\n", line=3, torch_version="2.5"),
        Invalid("from torch.distributed.launch import main\nmain()\n", line=1),
        Invalid(
            "import torch\nx = torch.zeros(4)\nptr = x.storage().data_ptr()\n",
            line=3,
            fixed="import torch\nx = torch.zeros(4)\nptr = x.untyped_storage().data_ptr()\n",
        ),
        Invalid(
            "from torch import nn\ncriterion = nn.MSELoss(size_average=False)\n",
            line=2,
            fixed='from torch import nn\ncriterion = nn.MSELoss(reduction="sum")\n',
        ),
        Invalid(
            "import torch\nfrom torch.cuda.amp import autocast\nwith autocast(dtype=torch.float16):\n    y = model(x)\n",
            line=3,
            fixed=(
                "import torch\nfrom torch.cuda.amp import autocast\n"
                'with torch.amp.autocast("cuda", dtype=torch.float16):\n    y = model(x)\n'
            ),
            torch_version="2.4",
        ),
    ]

    def _entry(self, func: cst.BaseExpression) -> tuple[str, Replacement] | None:
        """The table entry `func` names, as imported (`torch.cuda.amp.GradScaler` is not folded into
        `torch.amp.GradScaler` here), for the target torch version."""
        for q in (_as_imported(self.ctx, func), self.ctx.qualname(func)):
            entry = self.table.get(q) if q else None
            if entry is not None and q is not None:
                return (q, entry) if self.ctx.torch_version.pair >= entry.since else None
        return None

    def visit_Decorator(self, node: cst.Decorator) -> None:
        """`@torch.jit.script` without parentheses (a call is visit_Call's)."""
        if not isinstance(node.decorator, cst.Call):
            found = self._entry(node.decorator)
            if found is not None:
                q, entry = found
                self.report(node.decorator, self.message.format(old=q, status=self.status, new=entry.use))

    def _deprecations_beyond_the_table(self) -> bool:
        """Deprecated methods and modules are TL701's, not the removed-function table's (TL710)."""
        return self.table is _TABLE

    def visit_Import(self, node: cst.Import) -> None:
        if self._deprecations_beyond_the_table() and any(_is_launch(dotted(a.name)) for a in node.names):
            self._report_launch(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if not self._deprecations_beyond_the_table() or node.relative or node.module is None:
            return
        module = dotted(node.module) or ""
        names = node.names if not isinstance(node.names, cst.ImportStar) else ()
        if _is_launch(module) or (module == "torch.distributed" and any(is_name(a.name, "launch") for a in names)):
            self._report_launch(node)

    def _report_launch(self, node: cst.CSTNode) -> None:
        if self.ctx.torch_version.pair >= _LAUNCH_DEPRECATED:
            self.report(
                node, self.message.format(old=_LAUNCH, status=self.status, new="torchrun (torch.distributed.run)")
            )

    def _typed_storage(self, node: cst.Call) -> None:
        """`t.storage()` on a proven tensor: TypedStorage, deprecated since 2.0 -> `t.untyped_storage()`."""
        func = node.func
        if type(func) is not cst.Attribute or func.attr.value != "storage" or node.args:
            return
        if self.ctx.torch_version.pair < _TYPED_STORAGE_DEPRECATED or not self.ctx.kind(func.value) & Kind.TENSOR:
            return
        self.report(
            node,
            self.message.format(old="Tensor.storage()", status=self.status, new="Tensor.untyped_storage()"),
            fix=fix(
                "Use `untyped_storage()`",
                Replace(func.attr, "untyped_storage"),
                applicability=UNSAFE,
                risk="sizes and indices count bytes",
            ),
        )

    def _legacy_reduction(self, node: cst.Call) -> None:
        """`nn.MSELoss(size_average=False)` / `F.l1_loss(x, y, reduce=False)`: the 0.4.1 `reduction=` keyword."""
        found = legacy_reduction(self.ctx, node)
        if found is None:
            return
        new = f'reduction="{found.reduction}"' if found.reduction is not None else "reduction="
        edit = None
        if found.rewritten is not None:
            edit = fix(f"Use `{new}`", Replace(node, found.rewritten), applicability=SAFE)
        self.report(node, self.message.format(old="size_average= / reduce=", status=self.status, new=new), fix=edit)

    def visit_Call(self, node: cst.Call) -> None:
        if self._deprecations_beyond_the_table():
            self._typed_storage(node)
            self._legacy_reduction(node)
        found = self._entry(node.func)
        if found is None:
            return
        q, entry = found
        if isinstance(node.func, cst.Name) and _imported_twice(self.ctx, node.func.value):
            return  # `try: from torch.func import vmap / except ImportError: from functorch import vmap`
        edit = None
        torch = torch_alias(self.ctx)
        if entry.rewrite is not None and torch is not None:
            new = entry.rewrite(node, torch, q)
            if new is not None:
                edit = fix(f"Replace with `{entry.use.split(' ')[0]}`", Replace(node, new), applicability=SAFE)
        self.report(node, self.message.format(old=q, status=self.status, new=entry.use), fix=edit)
