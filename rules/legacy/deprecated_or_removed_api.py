"""TL701 deprecated-or-removed-api: Deprecated torch / torchvision API (removed ones are TL710)"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import ClassVar

import libcst as cst

from torchlint.engine.context import FileContext
from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.call_binding import bind, rebuild, signature
from torchlint.engine.core.callargs import get_arg, has_star, int_value, is_name
from torchlint.engine.rule import SAFE, UNSAFE, Category, Invalid, Replace, Rule, fix
from torchlint.engine.semantic.api_changes import DEPRECATED, LAUNCH_MODULE, TYPED_STORAGE, ApiChange
from torchlint.engine.semantic.kinds import Kind
from torchlint.engine.semantic.names import dotted
from torchlint.findings import Severity

from ._helpers import legacy_reduction
from ._signatures import TORCH

# (call, torch alias, old qualified name) -> the new call, or None when not certain
Rewrite = Callable[[cst.Call, str, str], str | cst.CSTNode | None]


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _joined(values: Iterable[cst.CSTNode]) -> str:
    return ", ".join(_code(v) for v in values)


# -- mechanical rewrites: (call, torch alias, old qualified name) -> the new call, or None when not certain
def _migrate(
    path: str,
    *,
    leading: tuple[str, ...] = (),
    extra: tuple[tuple[str, str], ...] = (),
    same_defaults: tuple[str, ...] = (),
) -> Rewrite:
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


def _bound(call: cst.Call, old: str, allowed: set[str]) -> dict[str, cst.Arg] | None:
    """The old call's arguments by parameter name (_signatures.py's data); None when the binding is not
    certain or binds a parameter the rewrite does not carry over (`out=`, `dtype=`)."""
    bound = bind(call, signature(TORCH[old]))
    if bound is None or any(name not in allowed and not name.startswith("*") for name in bound):
        return None
    return bound


def _qr(call: cst.Call, torch: str, old: str) -> str | None:
    bound = _bound(call, old, {"input", "some"})
    if bound is None:
        return None
    inp, some = bound["input"], bound.get("some")
    if some is None or is_name(some.value, "True"):
        return f"{torch}.linalg.qr({_code(inp.value)})"
    if is_name(some.value, "False"):
        return f'{torch}.linalg.qr({_code(inp.value)}, mode="complete")'
    return None


def _cholesky(call: cst.Call, torch: str, old: str) -> str | None:
    bound = _bound(call, old, {"input", "upper"})
    if bound is None:
        return None
    inp, upper = bound["input"], bound.get("upper")
    if upper is None or is_name(upper.value, "False"):
        return f"{torch}.linalg.cholesky({_code(inp.value)})"
    if is_name(upper.value, "True"):
        return f"{torch}.linalg.cholesky({_code(inp.value)}).mH"
    return None


def _chain_matmul(call: cst.Call, torch: str, old: str) -> str | None:
    bound = _bound(call, old, set())  # the matrices only: they are its `*matrices`
    return f"{torch}.linalg.multi_dot([{_joined(a.value for a in bound.values())}])" if bound else None


def _range(call: cst.Call, torch: str, old: str) -> str | None:
    """torch.range(s, e, step) includes `e` and returns floats; arange excludes it and keeps int dtype."""
    args = [a for a in call.args if a.keyword is None]
    if has_star(call) or not 1 <= len(args) <= 3 or any(a.keyword and a.keyword.value != "dtype" for a in call.args):
        return None
    values = [v for v in (int_value(a.value) for a in args) if v is not None]
    if len(values) != len(args):
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
    """The vector-norm cases: norm(x), norm(x, 2), norm(x, p=1, dim=1, keepdim=True): with a number `p`,
    torch.norm is linalg.vector_norm over `dim` (all of it when None)."""
    bound = _bound(call, old, {"input", "p", "dim", "keepdim"})
    if bound is None:
        return None
    parts = [_code(bound["input"].value)]
    p = bound.get("p")
    if p is not None:
        if not isinstance(p.value, (cst.Integer, cst.Float)):
            return None
        parts.append(f"ord={_code(p.value)}")
    parts += [f"{kw}={_code(bound[kw].value)}" for kw in ("dim", "keepdim") if kw in bound]
    return f"{torch}.linalg.vector_norm({', '.join(parts)})"


def _lu_solve(call: cst.Call, torch: str, old: str) -> str | None:
    bound = _bound(call, old, {"input", "LU_data", "LU_pivots"})
    if bound is None:
        return None
    b, lu, piv = (bound[name].value for name in ("input", "LU_data", "LU_pivots"))
    return f"{torch}.linalg.lu_solve({_code(lu)}, {_code(piv)}, {_code(b)})"


# `torch.amp.autocast`'s dtype=None and cache_enabled=None mean the device's defaults: float16 and True on
# CUDA, what `torch.cuda.amp.autocast` spelled out.
_AUTOCAST_DEVICE_DEFAULTS = ("dtype", "cache_enabled")


@dataclass(frozen=True)
class Replacement:
    """A table entry of `engine/semantic/api_changes.py` with this rule's mechanical rewrite, when it has one."""

    use: str
    rewrite: Rewrite | None = None
    applies_from: tuple[int, int] = (0, 0)  # ApiChange.applies_from: the first target the advice is true on
    since_text: str = ""  # ApiChange.since_text: `since 1.9`, for the message


def with_rewrites(table: dict[str, ApiChange], rewrites: dict[str, Rewrite]) -> dict[str, Replacement]:
    return {name: Replacement(c.use, rewrites.get(name), c.applies_from, c.since_text) for name, c in table.items()}


_REWRITES: dict[str, Rewrite] = {
    "torch.qr": _qr,
    "torch.cholesky": _cholesky,
    "torch.chain_matmul": _chain_matmul,
    "torch.range": _range,
    "torch.norm": _norm,
    "torch.ger": _migrate("outer"),
    "torch.lu": _migrate("linalg.lu_factor"),
    "torch.lu_solve": _lu_solve,
    "torch.nn.UpsamplingNearest2d": _migrate("nn.Upsample", extra=(("mode", '"nearest"'),)),
    "torch.nn.UpsamplingBilinear2d": _migrate("nn.Upsample", extra=(("mode", '"bilinear"'), ("align_corners", "True"))),
    "torch.nn.functional.upsample": _migrate("nn.functional.interpolate"),
    "torch.utils._pytree._register_pytree_node": _migrate("utils._pytree.register_pytree_node"),
    "torch.cuda.amp.autocast": _migrate("amp.autocast", leading=('"cuda"',), same_defaults=_AUTOCAST_DEVICE_DEFAULTS),
    "torch.cuda.amp.GradScaler": _migrate("amp.GradScaler", leading=('"cuda"',)),
    **{
        f"functorch.{fn}": _migrate(f"func.{fn}")
        for fn in ("vmap", "grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functionalize")
    },
}
_TABLE = with_rewrites(DEPRECATED, _REWRITES)
_LAUNCH = "torch.distributed.launch"


def _imported_twice(ctx: FileContext, local: str) -> bool:
    """`local` is bound by more than one import (a version fallback); the import table keeps the last."""
    return len(ctx.imports.from_modules.get(local, ())) > 1


def _as_imported(ctx: FileContext, node: cst.BaseExpression) -> str | None:
    """The qualified name of a name chain as its import spells it (no canonical folding)."""
    text = dotted(node)
    head, _, rest = (text or "").partition(".")
    base = ctx.imports.table.get(head)
    return None if base is None else f"{base}.{rest}" if rest else base


def _is_launch(module: str | None) -> bool:
    """`torch.distributed.launch` or a module under it (not `torch.distributed.launcher`, the elastic API)."""
    return module is not None and (module == _LAUNCH or module.startswith(_LAUNCH + "."))


def torch_alias(ctx: FileContext) -> str | None:
    """The local name bound to the `torch` module (`import torch`, `import torch as T`), if any."""
    return ctx.imports.local_name("torch")


class DeprecatedOrRemovedApi(Rule):
    code = "TL701"
    analyses = frozenset(
        {Analysis.KINDS, Analysis.OWN_SUMMARY, Analysis.SCOPES, Analysis.TORCH_VERSION, Analysis.VERSION_GUARDS}
    )
    table: ClassVar[dict[str, Replacement]] = _TABLE
    status = "deprecated"
    dated: ClassVar[bool] = True  # the message names the release an entry happened in ("deprecated since 2.1")
    requires = tuple(
        {q.rpartition(".")[2] for q in _TABLE} | {"functorch", "launch", "storage", "size_average", "reduce"}
    )
    version_sensitive = True
    name = "deprecated-or-removed-api"
    message = "`{old}` is {status}; use `{new}`"
    severity = Severity.WARNING
    category: ClassVar[Category] = "modernisation"  # declared: TL710 subclasses it with its own
    summary = "Deprecated torch / torchvision API that still runs (removed ones: TL710)"
    what = (
        "Flags calls to torch functions that are deprecated but still run on current PyTorch (`torch.qr`, "
        "`torch.lu`, `torch.cholesky`, `torch.chain_matmul`, `torch.range`, `torch.norm`, `torch.ger`, "
        "`functorch.*`, ...) — TorchFix's TOR101/TOR103/TOR202 set (not its TOR104/TOR105: a non-public alias "
        "such as `torch.utils.data._utils.collate.default_collate` is the public function itself and is not "
        "deprecated). Keyed to the torch version the project targets (see "
        "`torch-version`), each only from the release that deprecated it (and brought the replacement the "
        "message names; the message says since when: `torch.nn.utils.weight_norm` 2.1, `torch.norm` 1.7 with "
        "`torch.linalg.vector_norm` from 1.9, the `torch.linalg` migrations 1.9 to 1.13): `torch.cuda.amp.autocast` / "
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
                return (q, entry) if self.ctx.torch_version.pair >= entry.applies_from else None
        return None

    def visit_Decorator(self, node: cst.Decorator) -> None:
        """`@torch.jit.script` without parentheses (a call is visit_Call's)."""
        if not isinstance(node.decorator, cst.Call):
            found = self._entry(node.decorator)
            if found is not None:
                q, entry = found
                self.report(
                    node.decorator, self.message.format(old=q, status=self._status(entry.since_text), new=entry.use)
                )

    def _status(self, since_text: str) -> str:
        """`deprecated since 2.1`: version-true, the release the table records."""
        return f"{self.status} {since_text}" if self.dated and since_text else self.status

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
        if self.ctx.torch_version.pair >= LAUNCH_MODULE.since:
            self.report(
                node,
                self.message.format(old=_LAUNCH, status=self._status(LAUNCH_MODULE.since_text), new=LAUNCH_MODULE.use),
            )

    def _typed_storage(self, node: cst.Call) -> None:
        """`t.storage()` on a proven tensor: TypedStorage, deprecated since 2.0 -> `t.untyped_storage()`."""
        func = node.func
        if type(func) is not cst.Attribute or func.attr.value != "storage" or node.args:
            return
        if self.ctx.torch_version.pair < TYPED_STORAGE.since or not self.ctx.kind(func.value) & Kind.TENSOR:
            return
        self.report(
            node,
            self.message.format(
                old="Tensor.storage()", status=self._status(TYPED_STORAGE.since_text), new="Tensor.untyped_storage()"
            ),
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
        self.report(node, self.message.format(old=q, status=self._status(entry.since_text), new=entry.use), fix=edit)
