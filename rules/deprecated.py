"""Deprecated-API rules (TL7xx): removed or deprecated torch/torchvision APIs and legacy idioms."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from torchlint.engine.callargs import get_arg, has_star, int_value, is_name, string_value, with_keyword
from torchlint.engine.kinds import Kind
from torchlint.engine.names import dotted
from torchlint.engine.rule import Invalid, Replace, Rule, fix
from torchlint.engine.walk import iter_statements, small_statements
from torchlint.findings import Severity


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _positional(call: cst.Call) -> list[cst.Arg] | None:
    """The arguments if all are plain positional ones, else None."""
    if any(a.keyword is not None or a.star for a in call.args):
        return None
    return list(call.args)


def _joined(values) -> str:
    return ", ".join(_code(v) for v in values)


# -- mechanical rewrites: (call, torch alias) -> new call text, or None when not mechanical
def _rename(path: str, max_args: int | None = None) -> Callable:
    def rewrite(call: cst.Call, torch: str) -> str | None:
        if has_star(call) or (max_args is not None and (len(call.args) > max_args or _positional(call) is None)):
            return None
        return f"{torch}.{path}({_joined(a.value if a.keyword is None else a for a in call.args)})"

    return rewrite


def _qr(call: cst.Call, torch: str) -> str | None:
    inp, some = get_arg(call, "input", 0), get_arg(call, "some", 1)
    if inp is None or len(call.args) != 1 + (some is not None):
        return None
    if some is None or is_name(some.value, "True"):
        return f"{torch}.linalg.qr({_code(inp.value)})"
    if is_name(some.value, "False"):
        return f'{torch}.linalg.qr({_code(inp.value)}, mode="complete")'
    return None


def _cholesky(call: cst.Call, torch: str) -> str | None:
    inp, upper = get_arg(call, "input", 0), get_arg(call, "upper", 1)
    if inp is None or len(call.args) != 1 + (upper is not None):
        return None
    if upper is None or is_name(upper.value, "False"):
        return f"{torch}.linalg.cholesky({_code(inp.value)})"
    if is_name(upper.value, "True"):
        return f"{torch}.linalg.cholesky({_code(inp.value)}).mH"
    return None


def _chain_matmul(call: cst.Call, torch: str) -> str | None:
    args = _positional(call)
    return f"{torch}.linalg.multi_dot([{_joined(a.value for a in args)}])" if args else None


def _range(call: cst.Call, torch: str) -> str | None:
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


def _norm(call: cst.Call, torch: str) -> str | None:
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


def _lu_solve(call: cst.Call, torch: str) -> str | None:
    args = _positional(call)
    if not args or len(args) != 3:
        return None
    b, lu, piv = (a.value for a in args)
    return f"{torch}.linalg.lu_solve({_code(lu)}, {_code(piv)}, {_code(b)})"


def _upsampling(mode: str) -> Callable:
    def rewrite(call: cst.Call, torch: str) -> str | None:
        if has_star(call):
            return None
        extra = f'mode="{mode}"' + (", align_corners=True" if mode == "bilinear" else "")
        inner = _joined(a.value if a.keyword is None else a for a in call.args)
        return f"{torch}.nn.Upsample({inner}{', ' if inner else ''}{extra})"

    return rewrite


def _autocast(call: cst.Call, torch: str) -> str | None:
    if has_star(call):
        return None
    inner = _joined(a.value if a.keyword is None else a for a in call.args)
    return f'{torch}.amp.autocast("cuda"{", " if inner else ""}{inner})'


@dataclass(frozen=True)
class Replacement:
    use: str  # what to use instead, for the message
    removed: bool = False
    rewrite: Callable | None = None


_TABLE: dict[str, Replacement] = {
    "torch.solve": Replacement("torch.linalg.solve(A, B) (note the swapped arguments)", removed=True),
    "torch.symeig": Replacement("torch.linalg.eigh", removed=True),
    "torch.eig": Replacement("torch.linalg.eig", removed=True),
    "torch.lstsq": Replacement("torch.linalg.lstsq(A, B) (note the swapped arguments)", removed=True),
    "torch.matrix_rank": Replacement(
        "torch.linalg.matrix_rank", removed=True, rewrite=_rename("linalg.matrix_rank", 1)
    ),
    "torch.qr": Replacement("torch.linalg.qr", rewrite=_qr),
    "torch.cholesky": Replacement("torch.linalg.cholesky", rewrite=_cholesky),
    "torch.chain_matmul": Replacement("torch.linalg.multi_dot", rewrite=_chain_matmul),
    "torch.range": Replacement("torch.arange (which excludes the end)", rewrite=_range),
    "torch.norm": Replacement("torch.linalg.vector_norm / matrix_norm", rewrite=_norm),
    "torch.ger": Replacement("torch.outer", rewrite=_rename("outer")),
    "torch.lu": Replacement("torch.linalg.lu_factor", rewrite=_rename("linalg.lu_factor", 1)),
    "torch.lu_solve": Replacement("torch.linalg.lu_solve(LU, pivots, B) (note the argument order)", rewrite=_lu_solve),
    "torch.svd": Replacement("torch.linalg.svd (returns Vh, not V; full_matrices replaces some)"),
    "torch.triangular_solve": Replacement("torch.linalg.solve_triangular(A, B, upper=...)"),
    "torch.nn.UpsamplingNearest2d": Replacement(
        'torch.nn.Upsample(..., mode="nearest")', rewrite=_upsampling("nearest")
    ),
    "torch.nn.UpsamplingBilinear2d": Replacement(
        'torch.nn.Upsample(..., mode="bilinear", align_corners=True)', rewrite=_upsampling("bilinear")
    ),
    "torch.nn.functional.upsample": Replacement(
        "torch.nn.functional.interpolate", rewrite=_rename("nn.functional.interpolate")
    ),
    "torch.testing.assert_allclose": Replacement("torch.testing.assert_close"),
    "torch.nn.utils.weight_norm": Replacement("torch.nn.utils.parametrizations.weight_norm (state_dict keys change)"),
    "torch.utils._pytree._register_pytree_node": Replacement(
        "torch.utils._pytree.register_pytree_node", rewrite=_rename("utils._pytree.register_pytree_node")
    ),
    "torch.backends.cuda.sdp_kernel": Replacement("torch.nn.attention.sdpa_kernel"),
    "torch.cuda.amp.autocast": Replacement('torch.amp.autocast("cuda", ...)', rewrite=_autocast),
    "torch.set_default_tensor_type": Replacement("torch.set_default_dtype / torch.set_default_device"),
    "torchvision.transforms.v2.ToTensor": Replacement(
        "v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])"
    ),
    # non-public aliases of public functions
    "torch.utils.data._utils.collate.default_collate": Replacement(
        "torch.utils.data.default_collate", rewrite=_rename("utils.data.default_collate")
    ),
    "torch.utils.data._utils.collate.default_convert": Replacement(
        "torch.utils.data.default_convert", rewrite=_rename("utils.data.default_convert")
    ),
}
for _fn in ("vmap", "grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functionalize"):
    _TABLE[f"functorch.{_fn}"] = Replacement(f"torch.func.{_fn}", rewrite=_rename(f"func.{_fn}"))


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


def torch_alias(ctx) -> str | None:
    """The local name bound to the `torch` module (`import torch`, `import torch as T`), if any."""
    for local, q in ctx.imports.table.items():
        if q == "torch":
            return local
    return None


class DeprecatedOrRemovedApi(Rule):
    code = "TL701"
    requires = tuple({q.rpartition(".")[2] for q in _TABLE} | {"functorch"})
    name = "deprecated-or-removed-api"
    message = "`{old}` is {status}; use `{new}`"
    severity = Severity.WARNING
    summary = "Deprecated or removed torch / torchvision API"
    what = (
        "Flags calls to torch functions that are deprecated or removed (`torch.solve`, `torch.symeig`, "
        "`torch.qr`, `torch.lu`, `torch.cholesky`, `torch.chain_matmul`, `torch.range`, `torch.norm`, "
        "`torch.ger`, `functorch.*`, `torch.cuda.amp.autocast`, ...) and non-public aliases of public ones "
        "— TorchFix's TOR001/TOR004/TOR101/TOR103/TOR104/TOR105/TOR202 set."
    )
    why = (
        "Removed functions raise at run time on current PyTorch; deprecated ones warn and will be removed. "
        "Their `torch.linalg` replacements are better specified (batched, differentiable, consistent "
        "argument order) — which is also why some migrations are not a rename."
    )
    example = "import torch\n\nq, r = torch.qr(a)\n"
    fix_example = "import torch\n\nq, r = torch.linalg.qr(a)\n"
    fix_safety = (
        "Offered only where the rewrite keeps behaviour: renames with identical signatures, `qr(some=)` -> "
        "`mode=`, `cholesky(upper=True)` -> `.mH`, `chain_matmul` -> `multi_dot([...])`, `range` with literal "
        "integer bounds (keeping its floating dtype), vector cases of `norm`, `lu_solve` argument order. "
        "Others (`solve`, `svd`, `triangular_solve`, ...) change return values and are left to you."
    )
    VALID = [
        "import torch\nq, r = torch.linalg.qr(a)\nx = torch.arange(10)\n",
        "import numpy as np\nq, r = np.linalg.qr(a)\nn = np.linalg.norm(v)\n",
        "def qr(a):\n    return a\nqr(1)\n",
        "import torch\nn = torch.linalg.vector_norm(x, dim=1)\n",
        "try:\n    from torch.func import vmap\nexcept ImportError:\n    from functorch import vmap\nys = vmap(f)(xs)\n",
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
        Invalid("import torch\nx = torch.solve(b, A)\n", line=2),
        Invalid("from torch import norm\nn = norm(x)\n", line=2),
        Invalid(
            "import torch\nn = torch.norm(x, 2, dim=-1)\n",
            line=2,
            fixed="import torch\nn = torch.linalg.vector_norm(x, ord=2, dim=-1)\n",
        ),
        Invalid(
            "import torch\nfrom torch.cuda.amp import autocast\nwith autocast(dtype=torch.float16):\n    y = model(x)\n",
            line=3,
            fixed=(
                "import torch\nfrom torch.cuda.amp import autocast\n"
                'with torch.amp.autocast("cuda", dtype=torch.float16):\n    y = model(x)\n'
            ),
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        q = self.ctx.qualname(node.func)
        entry = _TABLE.get(q) if q else None
        if entry is None:
            return
        if isinstance(node.func, cst.Name) and _imported_twice(self.ctx, node.func.value):
            return  # `try: from torch.func import vmap / except ImportError: from functorch import vmap`
        status = "removed (it raises at run time)" if entry.removed else "deprecated"
        edit = None
        torch = torch_alias(self.ctx)
        if entry.rewrite is not None and torch is not None:
            new = entry.rewrite(node, torch)
            if new is not None:
                edit = fix(f"Replace with `{entry.use.split(' ')[0]}`", Replace(node, new))
        self.report(node, self.message.format(old=q, status=status, new=entry.use), fix=edit)


class AutogradVariable(Rule):
    code = "TL702"
    requires = ("Variable",)
    name = "autograd-variable"
    message = "`torch.autograd.Variable` has been a no-op wrapper since PyTorch 0.4: use the tensor itself{hint}"
    severity = Severity.WARNING
    summary = "torch.autograd.Variable(...)"
    what = "Flags calls to `torch.autograd.Variable`."
    why = (
        "Since 0.4 tensors carry autograd state themselves and `Variable(t)` just returns a tensor. The "
        "wrapper suggests semantics it no longer has — `volatile=True` is ignored (use `torch.no_grad()`), "
        "so code relying on it silently builds graphs and wastes memory."
    )
    example = "import torch\nfrom torch.autograd import Variable\n\nx = Variable(torch.randn(3))\n"
    fix_example = "import torch\nfrom torch.autograd import Variable\n\nx = torch.randn(3)\n"
    fix_safety = (
        "`Variable(t)` becomes `t`; `Variable(t, requires_grad=True)` becomes `t.requires_grad_()` (which marks "
        "`t` itself — the usual intent). Calls with `volatile=` are left to you."
    )
    VALID = [
        "import torch\nx = torch.randn(3, requires_grad=True)\n",
        "class Variable:\n    pass\nv = Variable()\n",
    ]
    INVALID = [
        Invalid(
            "import torch\nx = torch.autograd.Variable(t, requires_grad=True)\n",
            line=2,
            fixed="import torch\nx = t.requires_grad_()\n",
        ),
        Invalid("from torch.autograd import Variable\nx = Variable(t, volatile=True)\n", line=2),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) != "torch.autograd.Variable":
            return
        data = get_arg(node, "data", 0)
        grad = get_arg(node, "requires_grad", 1)
        edit = None
        if data is not None and len(node.args) == 1 + (grad is not None) and not has_star(node):
            code = self.ctx.module.code_for_node(data.value)
            if not isinstance(data.value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
                code = f"({code})"
            if grad is None or is_name(grad.value, "False"):
                edit = fix("Drop the wrapper", Replace(node, code))
            elif is_name(grad.value, "True"):
                edit = fix("Use `.requires_grad_()`", Replace(node, f"{code}.requires_grad_()"))
        volatile = get_arg(node, "volatile")
        hint = " (`volatile=True` is ignored: wrap the code in `with torch.no_grad():`)" if volatile else ""
        self.report(node, self.message.format(hint=hint), fix=edit)


_INIT_NAMES = ("init", "reset_parameters", "reset", "load", "copy", "ema", "update")


class TensorDataAttribute(Rule):
    code = "TL703"
    requires = ("data",)
    name = "tensor-data-attribute"
    message = "`{expr}.data` {how}: autograd cannot see the change or detect misuse{fix}"
    severity = Severity.WARNING
    summary = "Tensor .data access outside torch.no_grad() initialisation"
    what = (
        "Flags `.data` on tensors, parameters (`.weight`, `.bias`, loop variables over `.parameters()`) and "
        "`.grad` in code autograd sees — `forward`, training loops (loops that call `backward`), top-level "
        "script code — outside `torch.no_grad()` blocks and initialisation/EMA/copy helpers."
    )
    why = (
        "`.data` returns a tensor that shares storage but is detached from autograd's version counter. "
        "Writing through it changes values autograd saved for backward without raising (wrong gradients, "
        "silently); reading it gives a tensor whose later in-place modification corrupts the graph. "
        "`.detach()` is tracked, and writes belong under `with torch.no_grad():`."
    )
    example = "import torch\n\nlogits = torch.randn(4, 3)\nprobs = logits.data.softmax(-1)\n"
    fix_example = "import torch\n\nlogits = torch.randn(4, 3)\nprobs = logits.detach().softmax(-1)\n"
    fix_safety = (
        "Reads only: `x.data` becomes `x.detach()` (same values, no graph, version-tracked). Writes "
        "(`p.data = ...`, `p.data.mul_(...)`) are reported without a fix: move them under `torch.no_grad()`."
    )
    VALID = [
        """\
import torch
with torch.no_grad():
    for p in model.parameters():
        p.data.mul_(0.9)
""",
        """\
import torch
def init_weights(m):
    m.weight.data.normal_(0, 0.02)
""",
        "dataset = load()\nxs = dataset.data\n",
        # module surgery outside any graph
        "def fuse(conv, bn):\n    conv.weight.data = conv.weight.data * bn.weight.data\n",
        "import torch\ny = batch.data\n",
    ]
    INVALID = [
        Invalid(
            "import torch\nx = torch.ones(2)\ny = x.data.clone()\n",
            line=3,
            fixed="import torch\nx = torch.ones(2)\ny = x.detach().clone()\n",
        ),
        Invalid(
            """\
def train(model, loader):
    for x, y in loader:
        loss_fn(model(x), y).backward()
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-0.1)
            p.grad.zero_()
""",
            line=5,
        ),
        Invalid(
            """\
from torch import nn
class Clipped(nn.Module):
    def forward(self, x):
        self.fc.weight.data = self.fc.weight.data.clamp(-1, 1)
        return self.fc(x)
""",
            line=4,
        ),
    ]

    def visit_Module(self, node: cst.Module) -> None:
        self.writes: set[int] = set()
        self.params: set[str] = set()
        self.assigned: list[cst.BaseExpression] = []

    def visit_For(self, node: cst.For) -> None:
        it = node.iter
        while isinstance(it, cst.Call) and dotted(it.func) in ("enumerate", "zip", "list") and it.args:
            it = it.args[0].value
        if (
            isinstance(it, cst.Call)
            and isinstance(it.func, cst.Attribute)
            and it.func.attr.value in ("parameters", "named_parameters", "buffers", "named_buffers")
        ):
            for n in (node.target, *_names_in(node.target)):
                if isinstance(n, cst.Name):
                    self.params.add(n.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self.writes.add(id(t.target))
        # `w.data = w.data.clamp(...)`: one finding (the write), not a second for the read
        self.assigned = [t.target for t in node.targets]

    def leave_Assign(self, node: cst.Assign) -> None:
        self.assigned = []

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.writes.add(id(node.target))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value.endswith("_") and not func.attr.value.startswith("_"):
            self.writes.add(id(func.value))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "data":
            return
        recv = node.value
        if not self._is_tensor(recv) or self._exempt():
            return
        expr = self.ctx.module.code_for_node(recv)
        if id(node) not in self.writes and any(
            self.ctx.module.code_for_node(t) == f"{expr}.data" for t in self.assigned
        ):
            return
        if id(node) in self.writes:
            self.report(node, self.message.format(expr=expr, how="is written outside `torch.no_grad()`", fix=""))
        else:
            self.report(
                node,
                self.message.format(expr=expr, how="bypasses autograd", fix=f"; use `{expr}.detach()`"),
                fix=fix("Use `.detach()`", Replace(node, f"{expr}.detach()")),
            )

    def _is_tensor(self, recv: cst.BaseExpression) -> bool:
        if isinstance(recv, cst.Attribute) and recv.attr.value in ("weight", "bias", "grad"):
            return True
        if isinstance(recv, cst.Name) and recv.value in self.params:
            return True
        fn = self.ctx.current_function
        if isinstance(recv, cst.Name) and fn is not None and fn.name.value == "forward" and self.ctx.in_module_class:
            if recv.value in {p.name.value for p in fn.params.params[1:]}:
                return True  # forward's inputs are tensors
        return bool(self.ctx.kind(recv) & (Kind.TENSOR | Kind.LOSS)) and not self.ctx.kind(recv) & Kind.BATCH

    def _exempt(self) -> bool:
        """Only computation autograd may see: `forward`, training loops, top-level script code.

        Module surgery in library helpers (fusing, re-parameterising, copying weights) runs outside
        any graph and is not flagged.
        """
        if self.ctx.under_call("torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad"):
            return True
        if any(any(k in fn.name.value.lower() for k in _INIT_NAMES) for fn in self.ctx.functions):
            return True
        fn = self.ctx.current_function
        if fn is None or fn.name.value in ("forward", "training_step"):
            return False
        loops = self.ctx.loop_analysis
        return not any(loops.is_training_loop(loop) for loop in self.ctx.loops)


def _names_in(target: cst.BaseExpression):
    if isinstance(target, (cst.Tuple, cst.List)):
        for el in target.elements:
            yield el.value
            yield from _names_in(el.value)


class TorchvisionPretrained(Rule):
    code = "TL704"
    requires = ("pretrained",)
    name = "torchvision-pretrained-argument"
    message = "`{arg}=` was removed from torchvision model builders; use `{new}=`{hint}"
    severity = Severity.WARNING
    summary = "torchvision model built with pretrained="
    what = "Flags torchvision model builders (and `torch.hub.load('pytorch/vision', ...)`) called with `pretrained=` / `pretrained_backbone=`."
    why = (
        "torchvision 0.13 replaced the boolean with a `weights=` enum that names exactly which checkpoint "
        "(and preprocessing) is used; the boolean was deprecated and then removed, so the call fails on "
        "current torchvision."
    )
    example = "import torchvision\n\nmodel = torchvision.models.resnet50(pretrained=True)\n"
    fix_example = 'import torchvision\n\nmodel = torchvision.models.resnet50(weights="DEFAULT")\n'
    fix_safety = (
        '`pretrained=True` becomes `weights="DEFAULT"`, the best available weights — for some models newer '
        'than the ones `pretrained=True` loaded (use e.g. `"IMAGENET1K_V1"` to reproduce old results); '
        "`pretrained=False` becomes `weights=None`. Non-literal values are left to you."
    )
    VALID = [
        'import torchvision\nm = torchvision.models.resnet50(weights="DEFAULT")\n',
        "import timm\nm = timm.create_model('resnet50', pretrained=True)\n",
        "from torchvision.models import ResNet50_Weights\nw = ResNet50_Weights.DEFAULT\n",
    ]
    INVALID = [
        Invalid(
            "from torchvision.models.detection import fasterrcnn_resnet50_fpn\n"
            "m = fasterrcnn_resnet50_fpn(pretrained=False, pretrained_backbone=True)\n",
            line=2,
            fixed="from torchvision.models.detection import fasterrcnn_resnet50_fpn\n"
            'm = fasterrcnn_resnet50_fpn(weights=None, weights_backbone="DEFAULT")\n',
        ),
        Invalid("import torch\nm = torch.hub.load('pytorch/vision', 'resnet18', pretrained=flag)\n", line=2),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        q = self.ctx.qualname(node.func) or ""
        if q.startswith("torchvision.models."):
            if not q.rpartition(".")[2][:1].islower():
                return
        elif not (q == "torch.hub.load" and node.args and "pytorch/vision" in (string_value(node.args[0].value) or "")):
            return
        found = [
            a for a in node.args if a.keyword is not None and a.keyword.value in ("pretrained", "pretrained_backbone")
        ]
        if not found:
            return
        new_args = list(node.args)
        fixable = True
        for a in found:
            value = "None" if is_name(a.value, "False") else '"DEFAULT"' if is_name(a.value, "True") else None
            if value is None:
                fixable = False
                break
            new_name = a.keyword.value.replace("pretrained", "weights")
            new_args[new_args.index(a)] = a.with_changes(keyword=cst.Name(new_name), value=cst.parse_expression(value))
        first = found[0].keyword.value
        new = first.replace("pretrained", "weights")
        hint = (
            "" if fixable else f' (e.g. `{new}="DEFAULT" if {self.ctx.module.code_for_node(found[0].value)} else None`)'
        )
        edit = fix("Use `weights=`", Replace(node, node.with_changes(args=new_args))) if fixable else None
        self.report(node, self.message.format(arg=first, new=new, hint=hint), fix=edit)


class CheckpointReentrantUnspecified(Rule):
    code = "TL705"
    requires = ("checkpoint",)
    name = "checkpoint-reentrant-unspecified"
    message = (
        "`{fn}` without `use_reentrant=`: PyTorch warns and will change the default; pass "
        "`use_reentrant=False` (the recommended implementation)"
    )
    severity = Severity.WARNING
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
        "`use_reentrant=False` is the recommended implementation and supports more cases; code that relied "
        "on reentrant-specific behaviour (rare) should pass `use_reentrant=True` instead."
    )
    VALID = [
        "from torch.utils.checkpoint import checkpoint\nh = checkpoint(block, x, use_reentrant=False)\n",
        "from torch.utils.checkpoint import checkpoint\nh = checkpoint(block, x, **ckpt_kwargs)\n",
        "from deepspeed import checkpointing\nh = checkpointing.checkpoint(block, x)\n",
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
        if get_arg(node, "use_reentrant") is not None or has_star(node):
            return
        self.report(
            node,
            self.message.format(fn=q.rpartition(".")[2]),
            fix=fix("Add `use_reentrant=False`", Replace(node, with_keyword(node, "use_reentrant", "False"))),
        )


class RequireGradTypo(Rule):
    code = "TL706"
    requires = ("require_grad",)
    name = "require-grad-typo"
    message = "`.require_grad` is not a tensor attribute: this assignment does nothing; did you mean `.requires_grad`?"
    severity = Severity.ERROR
    summary = "Assignment to .require_grad (typo of .requires_grad)"
    what = "Flags assignments to an attribute named `require_grad`."
    why = (
        "Python lets you set any attribute on a tensor or parameter, so `p.require_grad = False` silently "
        "creates a new, meaningless attribute: the parameter keeps training (or stays frozen)."
    )
    example = "for p in model.parameters():\n    p.require_grad = False\n"
    fix_example = "for p in model.parameters():\n    p.requires_grad = False\n"
    fix_safety = "Safe: the intended attribute takes effect (which changes what trains — the point of the fix)."
    VALID = ["p.requires_grad = False\n", "require_grad = False\n"]
    INVALID = [
        Invalid(
            "model.encoder.weight.require_grad = False\n",
            line=1,
            fixed="model.encoder.weight.requires_grad = False\n",
        ),
    ]

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        t = node.target
        if isinstance(t, cst.Attribute) and t.attr.value == "require_grad":
            self.report(t, fix=fix("Use `.requires_grad`", Replace(t.attr, "requires_grad")))
