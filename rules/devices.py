"""Device rules (TL3xx): tensors and modules on the wrong device, and layouts `.view` rejects."""

from __future__ import annotations

import libcst as cst

from torchlint.engine.callargs import get_arg, has_star, int_value, string_value, with_keyword
from torchlint.engine.device_moves import contains_move, device_moves, move_call
from torchlint.engine.kinds import LOSS_FUNCTIONS, Kind
from torchlint.engine.names import dotted
from torchlint.engine.rule import InsertBefore, Invalid, Replace, Rule, fix
from torchlint.engine.walk import block_statements, iter_nodes, iter_statements, small_statements
from torchlint.findings import Severity

_LAUNCHERS = ("accelerate", "lightning", "pytorch_lightning", "ignite", "deepspeed")
_ITER_WRAPPERS = frozenset({"enumerate", "tqdm", "iter", "zip", "islice", "tqdm.tqdm", "tqdm.auto.tqdm"})
# methods that keep a value's device: `x.float()` of a CPU tensor is still on the CPU
_SAME_DEVICE = frozenset(
    {
        "float",
        "half",
        "double",
        "long",
        "int",
        "bool",
        "view",
        "reshape",
        "squeeze",
        "unsqueeze",
        "permute",
        "transpose",
        "contiguous",
        "flatten",
        "clone",
        "detach",
        "type",
        "get",
        "__getitem__",
    }
)


def _loader_iter(ctx, expr: cst.BaseExpression) -> tuple[cst.BaseExpression, bool] | None:
    """(loader expression, through enumerate) if a for-loop over `expr` draws DataLoader batches."""
    if ctx.kind(expr) & Kind.DATALOADER:
        return expr, False
    if isinstance(expr, cst.Call) and expr.args and not expr.args[0].star:
        name = dotted(expr.func)
        if name in _ITER_WRAPPERS or (ctx.qualname(expr.func) or "").endswith("tqdm"):
            inner = _loader_iter(ctx, expr.args[0].value)
            if inner is not None:
                return inner[0], inner[1] or name == "enumerate"
    return None


def _names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in _names(el.value)]
    return []


class InputNotMovedToDevice(Rule):
    code = "TL301"
    requires = (".to", ".cuda")
    name = "input-not-moved-to-device"
    message = (
        "`{name}` comes from the DataLoader on the CPU, but `{model}` was moved with `{suffix}`: "
        "the call fails with a device-mismatch error; move the batch too (`{name} = {name}{suffix}`)"
    )
    severity = Severity.ERROR
    summary = "Batch from a DataLoader reaches a moved model without being moved"
    what = (
        "Flags a batch drawn from a DataLoader inside a loop that is passed to a model (or to the loss "
        "next to it) without `.to(device)` / `.cuda()`, when that model was moved with `.to(...)` or "
        "`.cuda()`."
    )
    why = (
        "A DataLoader yields CPU tensors. Once the model's parameters are on the GPU, feeding it a CPU "
        "batch raises `RuntimeError: Expected all tensors to be on the same device` at the first step — "
        "or, for the loss target, only after the forward pass has already run."
    )
    example = """\
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = torch.nn.Linear(10, 2).to(device)
criterion = torch.nn.CrossEntropyLoss()
loader = torch.utils.data.DataLoader(dataset, batch_size=32)
for x, y in loader:
    out = model(x)
    loss = criterion(out, y.to(device))
"""
    fix_example = """\
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = torch.nn.Linear(10, 2).to(device)
criterion = torch.nn.CrossEntropyLoss()
loader = torch.utils.data.DataLoader(dataset, batch_size=32)
for x, y in loader:
    x = x.to(device)
    out = model(x)
    loss = criterion(out, y.to(device))
"""
    fix_safety = (
        "Safe: inserts `x = x.to(<the model's device expression>)` just before the use. Offered only "
        "when that device expression is visible at the loop (same function, module level, or `self.`)."
    )
    VALID = [
        """\
import torch
model = torch.nn.Linear(10, 2).to(device)
for x, y in loader:
    x, y = x.to(device), y.to(device)
    loss = criterion(model(x), y)
""",
        """\
import torch
model = Net().cuda()
for batch in train_loader:
    batch = {k: v.cuda() for k, v in batch.items()}
    out = model(**batch)
""",
        # the model is never moved: CPU training is consistent
        """\
model = Net()
for x, y in loader:
    loss = criterion(model(x), y)
""",
        """\
model.to(device)
for i, (images, labels) in enumerate(loader):
    out = model(images.to(device, non_blocking=True))
    loss = criterion(out, labels.to(device))
""",
        """\
from accelerate import Accelerator
model.to(device)
for x, y in loader:
    out = model(x)
""",
        # the dataset already lives on the device
        """\
import torch
model = Net().to(device)
data = torch.utils.data.TensorDataset(X.to(device), Y.to(device))
loader = torch.utils.data.DataLoader(data, batch_size=64)
for x, y in loader:
    loss = criterion(model(x), y)
""",
    ]
    INVALID = [
        Invalid(
            """\
model = Net().to(device)
for x, y in loader:
    out = model(x)
""",
            line=3,
            fixed="""\
model = Net().to(device)
for x, y in loader:
    x = x.to(device)
    out = model(x)
""",
        ),
        Invalid(
            """\
class Trainer:
    def __init__(self, net, device):
        self.model = net.to(self.device)
    def fit(self, train_loader):
        for step, batch in enumerate(train_loader):
            inputs, labels = batch
            logits = self.model(inputs.to(self.device))
            loss = self.criterion(logits, labels)
""",
            line=8,
        ),
        Invalid(
            """\
model.cuda()
for batch in loader:
    loss = model(**batch).loss
""",
            line=3,
        ),
    ]

    def visit_Module(self, node: cst.Module) -> None:
        self.skip = any(self.ctx.imports.imports_module(m) for m in _LAUNCHERS)

    def visit_For(self, node: cst.For) -> None:
        if self.skip:
            return
        found = _loader_iter(self.ctx, node.iter)
        if found is None:
            return
        target = node.target
        if found[1]:  # enumerate(loader): the first element is the index
            if not isinstance(target, cst.Tuple) or len(target.elements) != 2:
                return
            target = target.elements[1].value
        unmoved = dict.fromkeys(_names(target))
        if unmoved and not _built_on_device(self.ctx, found[0]):
            _LoopCheck(self, node, unmoved).run()


def _assigned_value(ctx, name: str | None) -> cst.BaseExpression | None:
    """The value last assigned to `name` anywhere in the file (flow-insensitive)."""
    value = None
    if name:
        for stmt in iter_statements(ctx.module.body, into_functions=True):
            for small in small_statements(stmt):
                if isinstance(small, cst.Assign) and any(dotted(t.target) == name for t in small.targets):
                    value = small.value
    return value


def _built_on_device(ctx, loader: cst.BaseExpression) -> bool:
    """`DataLoader(TensorDataset(x.to(device), ...))`: the batches are already on the device."""
    value = _assigned_value(ctx, dotted(loader))
    if not isinstance(value, cst.Call):
        return False
    if contains_move(value, ctx.imports):
        return True
    dataset = value.args[0].value if value.args else None
    inner = _assigned_value(ctx, dotted(dataset)) if dataset is not None else None
    return inner is not None and contains_move(inner, ctx.imports)


class _LoopCheck:
    """Walks one loader loop in source order, tracking which names still hold CPU batch data."""

    def __init__(self, rule: InputNotMovedToDevice, loop: cst.For, unmoved: dict) -> None:
        self.rule = rule
        self.ctx = rule.ctx
        self.moves = device_moves(rule.ctx)
        self.loop = loop
        self.unmoved = unmoved
        self.model_move = None  # the move of the model called so far in this iteration
        self.reported: set[str] = set()

    def run(self) -> None:
        for stmt in iter_statements(block_statements(self.loop.body)):
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                continue
            if isinstance(stmt, cst.For) and _loader_iter(self.ctx, stmt.iter) is not None:
                return  # a nested loader loop is checked on its own
            for small in small_statements(stmt):
                self._check_calls(small, stmt)
                self._update(small)

    # -- which expressions still carry CPU batch data ---------------------
    def _carrier(self, expr: cst.BaseExpression) -> str | None:
        while True:
            if isinstance(expr, cst.Name):
                return expr.value if expr.value in self.unmoved else None
            if isinstance(expr, (cst.Subscript, cst.Attribute)):
                expr = expr.value
            elif (
                isinstance(expr, cst.Call)
                and isinstance(expr.func, cst.Attribute)
                and expr.func.attr.value in _SAME_DEVICE
            ):
                expr = expr.func.value
            else:
                return None

    def _update(self, small: cst.BaseSmallStatement) -> None:
        if isinstance(small, cst.Assign):
            for t in small.targets:
                self._assign(t.target, small.value)
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            call = small.value
            found = move_call(call, self.ctx.imports)
            if found is not None:  # `batch.to(device)`: in place for BatchEncoding / PyG Data
                self.unmoved.pop(self._carrier(found[0]) or "", None)
            elif not self._is_model_call(call) and dotted(call.func) != "print":
                for a in call.args:  # a helper that may move a dict in place: `to_device(batch)`
                    if isinstance(a.value, cst.Name):
                        self.unmoved.pop(a.value.value, None)

    def _assign(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
            if len(target.elements) == len(value.elements):
                for t, v in zip(target.elements, value.elements):
                    self._assign(t.value, v.value)
                return
        if isinstance(target, cst.Subscript):  # batch[k] = batch[k].to(device)
            base = self._carrier(target)
            if base and contains_move(value, self.ctx.imports):
                self.unmoved.pop(base, None)
            return
        origin = None if contains_move(value, self.ctx.imports) else self._carrier(value)
        for name in _names(target):
            if origin is not None:
                self.unmoved[name] = None
            else:
                self.unmoved.pop(name, None)

    # -- calls ------------------------------------------------------------
    def _moved_model(self, call: cst.Call):
        moves = self.moves.of(dotted(call.func))
        return moves[0] if moves else None

    def _is_model_call(self, call: cst.Call) -> bool:
        return self._moved_model(call) is not None

    def _is_loss_call(self, call: cst.Call) -> bool:
        q = self.ctx.qualname(call.func)
        if q is not None and q.startswith("torch.nn.functional.") and q.rpartition(".")[2] in LOSS_FUNCTIONS:
            return True
        return bool(self.ctx.kind(call.func) & Kind.CRITERION)

    def _check_calls(self, small: cst.BaseSmallStatement, stmt: cst.BaseStatement) -> None:
        calls = [n for n in iter_nodes(small, into_functions=False) if isinstance(n, cst.Call)]
        for call in reversed(calls):  # innermost first: `criterion(model(x), y)`
            move = self._moved_model(call)
            if move is not None:
                self.model_move = move
                self._check_args(call, move, stmt)
            elif self.model_move is not None and self._is_loss_call(call):
                self._check_args(call, self.model_move, stmt)

    def _check_args(self, call: cst.Call, move, stmt: cst.BaseStatement) -> None:
        for arg in call.args:
            name = self._carrier(arg.value)
            if name is None or name in self.reported:
                continue
            self.reported.add(name)
            model = dotted(call.func) if self._moved_model(call) else move.target
            message = self.rule.message.format(name=name, model=model, suffix=move.suffix)
            edit = None
            if (
                isinstance(arg.value, cst.Name)
                and not arg.star
                and isinstance(stmt, cst.SimpleStatementLine)
                and self._visible(move)
            ):
                edit = fix(
                    f"Insert `{name} = {name}{move.suffix}`", InsertBefore(stmt, f"{name} = {name}{move.suffix}")
                )
            self.rule.report(arg.value, message, fix=edit)

    def _visible(self, move) -> bool:
        """Can the device expression the model was moved with be written at this loop?"""
        fn = self.ctx.current_function
        if move.device is None or fn is move.function:
            return True
        text = dotted(move.device) or ""
        if move.function is None or text.startswith("self."):
            return True
        # `def train(model, loader, device)`: the same name is bound here too
        needed = {n.value for n in (move.device, *iter_nodes(move.device)) if isinstance(n, cst.Name)}
        return fn is not None and needed <= _bound_names(fn)


def _bound_names(fn: cst.FunctionDef) -> set[str]:
    """Parameters of `fn` and names it assigns."""
    names = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)}
    for stmt in iter_statements(block_statements(fn.body)):
        for small in small_statements(stmt):
            if isinstance(small, cst.Assign):
                names.update(n for t in small.targets for n in _names(t.target))
    return names


class ModulePartiallyMoved(Rule):
    code = "TL302"
    requires = (".to", ".cuda")
    name = "module-partially-moved"
    message = (
        "only `{part}` is moved, but the whole `{root}` is called: its other submodules stay on the CPU "
        "(device-mismatch error); move the whole model with `{root}{suffix}`"
    )
    severity = Severity.ERROR
    summary = "A submodule is moved to a device but the whole model is called"
    what = (
        "Flags `model.encoder.to(device)` / `model.head.cuda()` when `model` itself is never moved but is "
        "called (`model(x)`)."
    )
    why = (
        "Moving one submodule leaves the rest of the model's parameters on the CPU. The forward pass then "
        "mixes devices and fails, or — if the moved part is unused — the model silently trains on the CPU."
    )
    example = """\
model = Seq2Seq()
model.encoder.to("cuda")
out = model(src)
"""
    fix_example = """\
model = Seq2Seq()
model.to("cuda")
out = model(src)
"""
    fix_safety = "Safe: moving the whole module moves a superset of what was moved before."
    VALID = [
        'model = Seq2Seq()\nmodel.to("cuda")\nout = model(src)\n',
        # model parallelism: parts deliberately on different devices
        'model = Big()\nmodel.encoder.to("cuda:0")\nmodel.decoder.to("cuda:1")\nout = model(x)\n',
        # only the part is used
        "model = Seq2Seq()\nmodel.encoder.to(device)\nh = model.encoder(src)\n",
        "class M(nn.Module):\n    def setup(self):\n        self.head.to(self.device)\n",
    ]
    INVALID = [
        Invalid(
            "net = build()\nnet.backbone.cuda()\nlogits = net(images)\n",
            line=2,
            fixed="net = build()\nnet.cuda()\nlogits = net(images)\n",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        found = move_call(node, self.ctx.imports)
        if found is None or not isinstance(found[0], cst.Attribute):
            return
        part = dotted(found[0])
        if not part or part.startswith("self.") or ".module" in part:
            return
        root = part.split(".")[0]
        if not self.ctx.kind(cst.Name(root)) & Kind.MODEL:
            return
        moves = device_moves(self.ctx)
        if moves.of(root) or root not in moves.called:
            return
        partial = [m for name, ms in moves.by_target.items() if name.startswith(root + ".") for m in ms]
        if len({m.suffix for m in partial}) > 1:  # parts on different devices: model parallelism
            return
        suffix = partial[0].suffix if partial else ".to(device)"
        self.report(
            node,
            self.message.format(part=part, root=root, suffix=suffix),
            fix=fix(f"Move the whole `{root}`", Replace(found[0], root)),
        )


def _mentions_accelerator(expr: cst.CSTNode) -> bool:
    """A test that looks at CUDA availability or a device choice: `torch.cuda.is_available()`, `args.cuda`, `device.type == "cuda"`."""
    for n in (expr, *iter_nodes(expr)):
        text = None
        if isinstance(n, cst.Name):
            text = n.value
        elif isinstance(n, cst.SimpleString):
            text = string_value(n)
        if text and any(k in text.lower() for k in ("cuda", "gpu", "is_available", "device_count", "device")):
            return True
    return False


def _exits(stmts) -> bool:
    """The block leaves the function/program: raise, return, sys.exit(), pytest.skip(...)."""
    for s in stmts:
        for small in small_statements(s):
            if isinstance(small, (cst.Raise, cst.Return)):
                return True
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                name = dotted(small.value.func) or ""
                if name.rpartition(".")[2] in ("exit", "skip", "skipTest", "quit"):
                    return True
    return False


def _guarded_block(body) -> bool:
    """`assert torch.cuda.is_available()` or `if not ...: raise` among these statements."""
    for s in body:
        for small in small_statements(s):
            if isinstance(small, cst.Assert) and _mentions_accelerator(small.test):
                return True
        if isinstance(s, cst.If) and _mentions_accelerator(s.test) and _exits(block_statements(s.body)):
            return True
    return False


class HardCodedCuda(Rule):
    code = "TL303"
    requires = ("cuda",)
    name = "hard-coded-cuda"
    message = (
        "hard-coded CUDA device `{what}` with no availability check: crashes on CPU-only and Apple "
        'machines; use a `device` variable (`torch.device("cuda" if torch.cuda.is_available() else "cpu")`)'
    )
    severity = Severity.WARNING
    summary = '`.cuda()` / `.to("cuda")` / `device="cuda"` without an availability guard'
    what = (
        'Flags `.cuda()`, `.to("cuda")` and `device="cuda"` on tensors and modules that are not under an '
        "`if` (or conditional expression, or function/file-level guard) that checks CUDA availability or "
        'a device choice. A device variable (`.to(device)`, even `device = torch.device("cuda")`) is not '
        "flagged: the choice is made once, in one place. Methods that implement `.cuda()`/`.to()` for a "
        "container type are skipped (their caller chose the device)."
    )
    why = (
        "`.cuda()` raises `AssertionError: Torch not compiled with CUDA enabled` on CPU-only machines and on "
        "Apple silicon, so the program cannot even be smoke-tested on a laptop or a CPU CI runner. A single "
        "`device` variable chosen once makes the same code run everywhere."
    )
    example = "import torch\n\nmodel = torch.nn.Linear(8, 2).cuda()\n"
    fix_example = (
        'import torch\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
        "model = torch.nn.Linear(8, 2).to(device)\n"
    )
    VALID = [
        "import torch\nif torch.cuda.is_available():\n    model = model.cuda()\n",
        'import torch\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\nx = x.to(device)\n',
        'import torch\nwith torch.autocast(device_type="cuda"):\n    y = model(x)\n',
        "import torch\nx = x.cuda() if args.cuda else x\n",
        'import torch\nassert torch.cuda.is_available()\nx = torch.zeros(3, device="cuda")\n',
        "import torch\ndef run():\n    if not torch.cuda.is_available():\n        return\n    model.cuda()\n",
        "import torch\nx = x.to(torch.float16)\n",
        "import torch\nclass Rigid:\n    def cuda(self):\n        return Rigid(self.rots.cuda(), self.trans.cuda())\n",
    ]
    INVALID = [
        Invalid('import torch\nx = torch.randn(4, 4, device="cuda")\n', line=2),
        Invalid('import torch\nbatch = batch.to("cuda:0")\n', line=2),
        Invalid("import torch\ndef train(model):\n    model.cuda()\n", line=3),
    ]

    def visit_Module(self, node: cst.Module) -> None:
        self.guards: list = []
        self.file_guarded = "cuda" not in self.ctx.text or _guarded_block(node.body)

    def _enter(self, test) -> None:
        self.guards.append(test)  # judged only when a hard-coded device is found under it

    def _leave(self, _node) -> None:
        self.guards.pop()

    def visit_If(self, node: cst.If) -> None:
        self._enter(node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._enter(node.test)

    def visit_While(self, node: cst.While) -> None:
        self._enter(node.test)

    leave_If = leave_IfExp = leave_While = _leave

    def _guarded(self) -> bool:
        if self.file_guarded or any(_mentions_accelerator(test) for test in self.guards):
            return True
        for fn in self.ctx.functions:
            if fn.name.value in ("cuda", "to", "_apply"):
                return True  # implementing `.cuda()` for a container type: the caller chose CUDA
            if any(_mentions_accelerator(d.decorator) for d in fn.decorators):
                return True
            if isinstance(fn.body, cst.IndentedBlock) and _guarded_block(fn.body.body):
                return True
        return False

    def visit_Call(self, node: cst.Call) -> None:
        what = self._hard_coded(node)
        if what is not None and not self._guarded():
            self.report(node, self.message.format(what=what))

    def _hard_coded(self, node: cst.Call) -> str | None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "cuda":
            if not node.args or int_value(node.args[0].value) is not None:
                if (dotted(func.value) or "").startswith("torch"):
                    return None
                return ".cuda()"
            return None
        if isinstance(func, cst.Attribute) and func.attr.value == "to":
            arg = get_arg(node, "device", 0)
            text = string_value(arg.value) if arg else None
            return f'.to("{text}")' if text and text.startswith("cuda") else None
        arg = get_arg(node, "device")
        text = string_value(arg.value) if arg else None
        if text and text.startswith("cuda") and (self.ctx.qualname(func) or "").startswith("torch."):
            return f'device="{text}"'
        return None


_CREATE_ON_CPU = frozenset(
    "zeros ones empty full rand randn randint randperm arange linspace logspace eye tensor "
    "FloatTensor LongTensor DoubleTensor HalfTensor BoolTensor IntTensor ByteTensor Tensor".split()
)
_LEGACY = frozenset(n for n in _CREATE_ON_CPU if n.endswith("Tensor"))
_RELOCATE = frozenset({"to", "cuda", "type_as", "to_device"})


class TensorCreatedOnDefaultDevice(Rule):
    code = "TL304"
    requires = ("forward",)
    name = "tensor-created-on-default-device-in-forward"
    message = (
        "`torch.{fn}(...)` in `forward` creates a CPU tensor whatever device the module is on; it meets "
        "CUDA activations with a device-mismatch error — pass `device={inp}.device`"
    )
    severity = Severity.WARNING
    summary = "New tensor in forward() without device="
    what = (
        "Flags tensor factories (`torch.zeros`, `ones`, `arange`, `randn`, `tensor`, ...) called inside an "
        "`nn.Module`'s `forward` without `device=`, that are not moved afterwards (`.to(...)`, "
        "`.type_as(...)`) and are not indices."
    )
    why = (
        "Factories allocate on the default device (the CPU) regardless of where the module lives. The "
        "model works in CPU tests and fails as soon as it is moved to a GPU. `torch.zeros_like(x)` or "
        "`device=x.device` follows the input."
    )
    example = """\
import torch
from torch import nn

class Mask(nn.Module):
    def forward(self, x):
        mask = torch.ones(x.shape[0], x.shape[1])
        return x * mask
"""
    fix_example = """\
import torch
from torch import nn

class Mask(nn.Module):
    def forward(self, x):
        mask = torch.ones(x.shape[0], x.shape[1], device=x.device)
        return x * mask
"""
    fix_safety = (
        "Safe when the first argument of `forward` is a tensor (the usual case): the new tensor follows "
        "it. Not offered when the first argument is optional, variadic or annotated as a non-tensor."
    )
    VALID = [
        """\
import torch
from torch import nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("pos", torch.arange(128))
    def forward(self, x):
        a = torch.zeros(x.shape, device=x.device)
        b = torch.zeros_like(x)
        c = torch.arange(x.size(1)).to(x.device)
        d = x[torch.arange(x.size(0))]
        e = torch.tensor(0.5)
        f = torch.ones(3, dtype=x.dtype).type_as(x)
        return a + b + c + d * e + f
""",
        """\
import torch
from torch import nn
class M(nn.Module):
    def forward(self, x):
        steps = torch.arange(x.size(1))
        steps = steps.to(x.device)
        return x + steps
""",
        """\
import torch
class NotAModule:
    def forward(self, x):
        return torch.zeros(3)
""",
        """\
import torch
from torch import nn
class DropPath(nn.Module):
    def forward(self, x):
        if self.training and torch.rand(1) < self.p:
            return x
        keep = torch.randperm(x.size(1))
        return x[:, keep] * torch.randint(2, (1,)).item()
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
from torch import nn
class Attn(nn.Module):
    def forward(self, q, k):
        causal = torch.tril(torch.ones(q.size(1), q.size(1)))
        return causal
""",
            line=5,
            fixed="""\
import torch
from torch import nn
class Attn(nn.Module):
    def forward(self, q, k):
        causal = torch.tril(torch.ones(q.size(1), q.size(1), device=q.device))
        return causal
""",
        ),
        Invalid(
            """\
import torch
from torch import nn
class Pos(nn.Module):
    def forward(self, x):
        return x + torch.FloatTensor(x.size(-1)).uniform_()
""",
            line=5,
        ),
    ]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node.name.value == "forward" and self.ctx.in_module_class:
            self.pending: list = []
            self.exempt: set = set()
            self.bound: dict = {}  # factory call -> the name its result is bound to
            self.assigning: list[str] = []  # targets of the assignments being visited
            self.moved_names: set[str] = set()  # later `.to(...)`'d, or used as an index

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node.name.value != "forward" or not self.ctx.in_module_class:
            return
        inp = _first_tensor_param(node)
        for call, fn in self.pending:
            if call in self.exempt or self.bound.get(call, "") in self.moved_names:
                continue
            edit = None
            if inp is not None and fn not in _LEGACY:
                edit = fix(f"Add `device={inp}.device`", Replace(call, with_keyword(call, "device", f"{inp}.device")))
            self.report(call, self.message.format(fn=fn, inp=inp or "x"), fix=edit)

    def _in_forward(self) -> bool:
        fn = self.ctx.current_function
        return fn is not None and fn.name.value == "forward" and self.ctx.in_module_class

    def visit_Call(self, node: cst.Call) -> None:
        if not self._in_forward():
            return
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _RELOCATE | _TO_PYTHON:
            self.exempt.add(_factory_of(func.value))
            if isinstance(func.value, cst.Name):
                self.moved_names.add(func.value.value)
        if dotted(func) in ("self.register_buffer", "int", "float", "bool", "len"):
            self.exempt.update(_factory_of(a.value) for a in node.args)
        q = self.ctx.qualname(func)
        if q is None or q.rpartition(".")[0] != "torch" or q[6:] not in _CREATE_ON_CPU:
            return
        if get_arg(node, "device") is not None or has_star(node):
            return
        fn = q[6:]
        if fn == "tensor" and (
            not node.args or not isinstance(node.args[0].value, (cst.List, cst.Tuple, cst.ListComp))
        ):
            return  # a scalar (0-dim CPU tensors mix freely with CUDA tensors) or an existing tensor
        if _zero_dim(node):
            return
        if self.assigning:
            self.bound[node] = self.assigning[-1]
        self.pending.append((node, fn))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if self._in_forward():  # `if torch.rand(1) < self.p:`
            self.exempt.add(_factory_of(node.left))
            self.exempt.update(_factory_of(c.comparator) for c in node.comparisons)

    def visit_For(self, node: cst.For) -> None:
        if self._in_forward():  # `for i in torch.randperm(n):` yields Python-usable indices
            self.exempt.add(_factory_of(node.iter))

    def visit_If(self, node: cst.If) -> None:
        if self._in_forward():  # `if signed and torch.randint(2, (1,)):` is a Python truth test
            test = node.test
            parts = [test.left, test.right] if isinstance(test, cst.BooleanOperation) else [test]
            self.exempt.update(_factory_of(p) for p in parts)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if self._in_forward():
            for el in node.slice:
                if isinstance(el.slice, cst.Index):
                    self.exempt.add(_factory_of(el.slice.value))
                    base = el.slice.value  # `x[rows]`, `x[rows.squeeze(-1)]`: an index may stay on the CPU
                    while isinstance(base, cst.Call) and isinstance(base.func, cst.Attribute):
                        base = base.func.value
                    if isinstance(base, cst.Name):
                        self.moved_names.add(base.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if not self._in_forward() or len(node.targets) != 1:
            return
        target = node.targets[0].target
        if isinstance(target, cst.Name):  # `n = torch.ones(b) * k + 1`: factories below are bound to `n`
            self.assigning.append(target.value)
        elif isinstance(target, cst.Subscript):  # `dst[:k] = src[:k]` copies across devices
            self.moved_names.update(n.value for n in (node.value, *iter_nodes(node.value)) if isinstance(n, cst.Name))

    def leave_Assign(self, node: cst.Assign) -> None:
        if self._in_forward() and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self.assigning.pop()


_TO_PYTHON = frozenset({"item", "tolist", "numpy"})


def _factory_of(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The innermost receiver of a method chain: `torch.arange(n).unsqueeze(-1)` -> `torch.arange(n)`."""
    while (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and isinstance(expr.func.value, cst.Call)
        and not isinstance(expr.func.value.func, cst.Name)
    ):
        expr = expr.func.value
    return expr


def _zero_dim(call: cst.Call) -> bool:
    """`torch.rand([])`, `torch.zeros(())`: a 0-dim tensor, which mixes freely with CUDA tensors."""
    sizes = [a.value for a in call.args if a.keyword is None or a.keyword.value == "size"]
    return bool(sizes) and all(isinstance(s, (cst.Tuple, cst.List)) and not s.elements for s in sizes)


def _first_tensor_param(fn: cst.FunctionDef) -> str | None:
    params = fn.params.params
    if len(params) < 2:
        return None
    p = params[1]
    if p.default is not None:
        return None
    if p.annotation is not None and "Tensor" not in cst.Module([]).code_for_node(p.annotation.annotation):
        return None
    return p.name.value


_NON_CONTIGUOUS_METHODS = frozenset(
    {"transpose", "permute", "t", "expand", "swapaxes", "swapdims", "movedim", "moveaxis"}
)
_NON_CONTIGUOUS_ATTRS = frozenset({"T", "mT", "H", "mH"})


class ViewOnNonContiguous(Rule):
    code = "TL305"
    requires = ("view",)
    name = "view-on-non-contiguous"
    message = (
        "`.view(...)` merges dimensions that `.{op}` left non-contiguous: it raises "
        "`RuntimeError: view size is not compatible with input tensor's size and stride`; use `.reshape(...)`"
    )
    severity = Severity.ERROR
    summary = "`.view()` right after transpose/permute/expand"
    what = (
        "Flags `.view(shape)` applied to the result of `.transpose`, `.permute`, `.t()`, `.mT`, `.expand` "
        "and similar (directly, or through a variable) with no `.contiguous()` in between, when the view "
        "must merge dimensions the operation made non-adjacent (flattening; fewer dimensions than "
        "`permute`/`expand` produced; a transpose's dimensions merged). Splitting views are valid and not flagged."
    )
    why = (
        "These operations return strided views whose memory is not laid out in row-major order; `.view` "
        "needs compatible strides and raises at run time. `.reshape` copies only when it must."
    )
    example = "y = x.transpose(1, 2).view(b, t, h * d)\n"
    fix_example = "y = x.transpose(1, 2).reshape(b, t, h * d)\n"
    fix_safety = (
        "Safe: `.reshape` returns a view whenever `.view` would have succeeded, and a copy otherwise — "
        "where the copy shares no memory with the input (in-place writes to it no longer reach `x`)."
    )
    VALID = [
        "y = x.transpose(1, 2).contiguous().view(b, t, -1)\n",
        "y = x.permute(0, 2, 1).reshape(b, -1)\n",
        "import torch\ny = x.transpose(0, 1).view(torch.int16)\n",
        "y = x.view(b, -1).transpose(0, 1)\n",
        "h = x.transpose(1, 2)\nh = h.contiguous()\nout = h.view(b, -1)\n",
        # splitting a dimension is always a valid view
        "feat = tokens.transpose(1, 2).view(B, C, H, W)\n",
        # merging dims 2 and 3 of the input, which stay adjacent
        "emb = pos.permute(0, 2, 3, 1).view(1, -1, dim)\n",
        "q = q.view(B, N, H, D).transpose(1, 2)\nk = k.view(B, N, H, D).transpose(1, 2)\n",
    ]
    INVALID = [
        Invalid(
            "out = attn.permute(0, 2, 1, 3).view(b, n, -1)\n",
            line=1,
            fixed="out = attn.permute(0, 2, 1, 3).reshape(b, n, -1)\n",
        ),
        Invalid("def f(x):\n    h = x.transpose(1, 2)\n    return h.view(h.size(0), -1)\n", line=3),
        Invalid("y = w.mT.view(-1)\n", line=1),
    ]

    def visit_Module(self, node: cst.Module) -> None:
        self.strided: dict[tuple, cst.BaseExpression] = {}  # (function, name) -> the op that made it strided

    def _op(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            if expr.func.attr.value in _NON_CONTIGUOUS_METHODS:
                return expr
        if isinstance(expr, cst.Attribute) and expr.attr.value in _NON_CONTIGUOUS_ATTRS:
            return expr
        if isinstance(expr, cst.Name):
            return self.strided.get((self.ctx.current_function, expr.value))
        return None

    def leave_Assign(self, node: cst.Assign) -> None:
        # after the value: `q = q.view(...).transpose(1, 2)` views `q` before it becomes strided
        for t in node.targets:
            if isinstance(t.target, cst.Name):
                key = (self.ctx.current_function, t.target.value)
                op = self._op(node.value) if not isinstance(node.value, cst.Name) else None
                if op is not None:
                    self.strided[key] = op
                else:
                    self.strided.pop(key, None)
            else:  # `k, v = qkv.split(...)`: rebound, whatever they were
                for name in _names(t.target):
                    self.strided.pop((self.ctx.current_function, name), None)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "view" or not node.args:
            return
        if any(a.star or a.keyword for a in node.args):
            return
        if len(node.args) == 1:
            q = self.ctx.qualname(node.args[0].value) or ""
            if q.startswith("torch.") or isinstance(node.args[0].value, cst.SimpleString):
                return  # a dtype view
        shape = [a.value for a in node.args]
        if len(shape) == 1 and isinstance(shape[0], (cst.Tuple, cst.List)):
            shape = [e.value for e in shape[0].elements]
        elif len(shape) == 1 and not isinstance(shape[0], (cst.Integer, cst.UnaryOperation, cst.BinaryOperation)):
            return  # `.view(shape_kv)`: a shape held in a variable, of unknown length
        op = self._op(func.value)
        if op is not None and _must_merge(op, shape):
            name = op.func.attr.value + "(...)" if isinstance(op, cst.Call) else op.attr.value
            self.report(
                node, self.message.format(op=name), fix=fix("Use `.reshape(...)`", Replace(func.attr, "reshape"))
            )


def _is_product(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply)


def _int_args(call: cst.Call) -> list[int] | None:
    args = [a.value for a in call.args]
    if len(args) == 1 and isinstance(args[0], (cst.Tuple, cst.List)):
        args = [e.value for e in args[0].elements]
    values = [int_value(a) for a in args]
    return None if None in values or any(a.star for a in call.args) else values


def _must_merge(op: cst.BaseExpression, shape: list) -> bool:
    """Does this `.view` have to merge dimensions the op made non-adjacent in memory?

    Splitting a dimension is always a valid view; only merges can fail. Without
    shapes we decide from ranks: a view to fewer dimensions than the op's result
    must merge, and it fails when no merge of memory-adjacent dimensions is left.
    """
    view_rank = len(shape)
    if view_rank == 1:
        return True  # flattening a transposed/expanded tensor
    if not isinstance(op, cst.Call):
        return False
    method = op.func.attr.value
    dims = _int_args(op)
    if method == "permute" and dims:
        if view_rank >= len(dims):
            return False
        adjacent = sum(1 for a, b in zip(dims, dims[1:]) if b == a + 1)
        return adjacent < len(dims) - view_rank
    if method in ("transpose", "swapaxes", "swapdims") and dims and len(dims) == 2 and min(dims) >= 0:
        # `.view(depth * batch, c, h, w)`: a product before the swapped dims merges leading dims (safe),
        # so the input has more dimensions than the view and the swapped ones may just be split
        if any(_is_product(d) for d in shape[: min(dims)]):
            return False
        return dims[0] != dims[1] and view_rank <= max(dims) + 1
    if method == "expand" and dims is not None and len(dims) > 1:
        return view_rank < len(dims)
    return False
