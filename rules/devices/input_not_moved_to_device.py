"""TL301 input-not-moved-to-device: Batch from a DataLoader reaches a moved model without being moved"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from torchlint.engine.context import FileContext
from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.callargs import get_arg
from torchlint.engine.core.walk import block_statements, iter_nodes, iter_statements, small_statements
from torchlint.engine.rule import SAFE, UNSAFE, InsertBefore, Invalid, Rule, fix
from torchlint.engine.semantic.kinds import (
    LAUNCHER_LIBRARIES,
    LOADER_WRAPPERS,
    LOSS_FUNCTIONS,
    SAME_DEVICE_METHODS,
    Kind,
)
from torchlint.engine.semantic.names import dotted, target_names
from torchlint.engine.semantic.values import Where, current_where, instantiated_class, where_of
from torchlint.engine.torch.dataset_storage import collate_on_device, device_samples
from torchlint.engine.torch.default_device import default_device_factory
from torchlint.engine.torch.device_moves import (
    Move,
    contains_move,
    cpu_arguments_of,
    device_type,
    move_call,
    moves_its_inputs,
    placed_on_device,
)
from torchlint.findings import Severity

# methods that keep a value's device: `x.float()` of a CPU tensor is still on the CPU
_SAME_DEVICE = SAME_DEVICE_METHODS | {"__getitem__", "get", "type"}
_CREATED_MESSAGE = (
    "`{name}` is created by `torch.{fn}(...)` on the CPU, but `{model}` was moved with `{suffix}`: "
    "the call fails with a device-mismatch error; create it on the device (`device=`) or move it "
    "(`{name} = {name}{suffix}`)"
)


def _loader_iter(ctx: FileContext, expr: cst.BaseExpression) -> tuple[cst.BaseExpression, bool] | None:
    """(loader expression, through enumerate) if a for-loop over `expr` draws DataLoader batches."""
    if ctx.kind(expr) & Kind.DATALOADER:
        return expr, False
    if isinstance(expr, cst.Call) and expr.args and not expr.args[0].star:
        name = dotted(expr.func)
        if name in LOADER_WRAPPERS or ctx.qualname(expr.func) in LOADER_WRAPPERS:
            inner = _loader_iter(ctx, expr.args[0].value)
            if inner is not None:
                return inner[0], inner[1] or name == "enumerate"
    return None


class InputNotMovedToDevice(Rule):
    code = "TL301"
    analyses = frozenset(
        {
            Analysis.CALL_SITES,
            Analysis.FORWARD_ARGUMENTS_LEFT_UNMOVED,
            Analysis.DEVICE_MOVES,
            Analysis.KINDS,
            Analysis.OWN_SUMMARY,
            Analysis.SCOPES,
            Analysis.VALUES,
        }
    )
    requires = (".to", ".cuda")
    name = "input-not-moved-to-device"
    message = (
        "`{name}` comes from the DataLoader on the CPU, but `{model}` was moved with `{suffix}`: "
        "the call fails with a device-mismatch error; move the batch too (`{name} = {name}{suffix}`)"
    )
    severity = Severity.ERROR
    category = "correctness"
    opt_in = (
        "Measured on 123 public repositories it was not tuned on (bench/realworld, seven sets unseen at "
        "2026-12-03 and 2026-12-04), 7 of its 47 findings were right and 39 wrong: batches the program "
        "had already put on the device in ways the engine did not follow (a Dataset that moves its "
        "tensors in `__init__`, a `collate_fn` that moves each batch, a TensorDataset of device tensors "
        "and a `DataParallel` model, which scatters CPU inputs itself: all followed now). Select it for "
        "scripts that move each batch in the training loop itself."
    )
    summary = "Batch from a DataLoader reaches a moved model without being moved"
    what = (
        "Flags a batch drawn from a DataLoader inside a loop that is passed to a model (or to the loss "
        "next to it) without `.to(device)` / `.cuda()`, when that model was moved with `.to(...)` or "
        "`.cuda()`. Also flags a tensor created in that loop on the default device "
        "(`torch.randn(x.shape)`, `torch.zeros(n)` without `device=`) that reaches the model or its loss "
        "unmoved; 0-dim tensors (`torch.tensor(2.0)`) are not flagged, as they mix with any device, nor "
        "arguments a caller need not move: lengths the API takes on the CPU (`nn.CTCLoss`, a `forward` "
        "that hands them to `pack_padded_sequence`) and inputs the model's `forward` moves itself."
    )
    why = (
        "A DataLoader yields CPU tensors. Once the model's parameters are on the GPU, feeding it a CPU "
        "batch raises `RuntimeError: Expected all tensors to be on the same device` at the first step — "
        "or, for the loss target, only after the forward pass has already run. A tensor made with "
        "`torch.randn(...)` / `torch.zeros(...)` without `device=` lands on the CPU the same way, "
        "wherever the batch is."
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
        "Inserts `x = x.to(<the model's device expression>)` just before the use. Safe when `x` is known "
        "to be a tensor. Unsafe when `x` is only known to be drawn from a DataLoader: a batch element is "
        "usually a tensor, but a custom `collate_fn` may hand out a list or a dict, which has no `.to()`. "
        "Offered only when that device expression is visible at the loop (same function, module level, "
        "or `self.`) and `x` is known to be one of those."
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
        # a Dataset that moves its tensors in `__init__` and hands them out from `__getitem__`
        """\
import torch
class Pairs(torch.utils.data.Dataset):
    def __init__(self, x, y):
        self.x = torch.tensor(x).float().to(device)
        self.y = torch.tensor(y).float().to(device)
    def __getitem__(self, i):
        return self.x[i], self.y[i]
model = Net().to(device)
loader = torch.utils.data.DataLoader(Pairs(x, y), batch_size=2)
for xb, yb in loader:
    loss = criterion(model(xb), yb)
""",
        # a Dataset that copies tensors the caller moved (`torch.tensor(t)` keeps `t`'s device)
        """\
import torch
class Pairs(torch.utils.data.Dataset):
    def __init__(self, x, y):
        self.x = torch.tensor(x).float()
        self.y = torch.tensor(y).float()
    def __getitem__(self, i):
        return self.x[i], self.y[i]
X = torch.tensor(x).float().to(device)
Y = torch.tensor(y).float().to(device)
model = Net().to(device)
loader = torch.utils.data.DataLoader(Pairs(X, Y), batch_size=2)
for xb, yb in loader:
    loss = criterion(model(xb), yb)
""",
        # a `collate_fn` that returns each batch moved to the device
        """\
import torch
def collate(samples):
    xs, ys = zip(*samples)
    return torch.stack(xs).to(device), torch.tensor(ys).to(device)
model = Net().to(device)
loader = torch.utils.data.DataLoader(dataset, batch_size=8, collate_fn=collate)
for xb, yb in loader:
    loss = criterion(model(xb), yb)
""",
        # tensors made in the loop: on the device, moved before use, shaped like a moved tensor,
        # used only on the host, or 0-dim (a scalar mixes with tensors on any device)
        """\
import torch
model = torch.nn.Linear(4, 1).to(device)
loader = torch.utils.data.DataLoader(dataset)
for x, y in loader:
    x, y = x.to(device), y.to(device)
    noise = torch.randn(x.shape, device=device)
    mask = torch.rand(x.shape[0]).to(device)
    jitter = torch.randn_like(x) + x.new_zeros(x.shape)
    perm = torch.randperm(x.shape[0])
    scale = torch.tensor(2.0)
    print(torch.zeros(3))
    loss = criterion(model(x[perm] + noise + jitter) * scale, y * mask[:, None])
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
model = torch.nn.Linear(4, 2).to(device)
loader = torch.utils.data.DataLoader(dataset)
for x, y in loader:
    out = model(x)
""",
            line=5,
            fixed="""\
import torch
model = torch.nn.Linear(4, 2).to(device)
loader = torch.utils.data.DataLoader(dataset)
for x, y in loader:
    x = x.to(device)
    out = model(x)
""",
        ),
        Invalid(
            """\
import torch
class Trainer:
    def __init__(self, net: torch.nn.Module, device):
        self.model = net.to(self.device)
        self.criterion = torch.nn.CrossEntropyLoss()
    def fit(self, train_loader: torch.utils.data.DataLoader):
        for step, batch in enumerate(train_loader):
            inputs, labels = batch
            logits = self.model(inputs.to(self.device))
            loss = self.criterion(logits, labels)
""",
            line=10,
        ),
        Invalid(
            """\
import torch
import transformers
model = transformers.AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
loader = torch.utils.data.DataLoader(dataset)
model.cuda()
for batch in loader:
    loss = model(**batch).loss
""",
            line=7,
        ),
        Invalid(
            """\
import torch
model = torch.nn.Linear(4, 1).to(device)
loader = torch.utils.data.DataLoader(dataset)
for x, y in loader:
    x, y = x.to(device), y.to(device)
    noise = torch.randn(x.shape) * 0.1
    out = model(x + noise)
""",
            line=7,
        ),
        Invalid(
            """\
import torch
model = torch.nn.Linear(4, 1).to(device)
loader = torch.utils.data.DataLoader(dataset)
for x, y in loader:
    x = x.to(device)
    target = torch.zeros(x.shape[0], 1)
    loss = torch.nn.functional.mse_loss(model(x), target)
""",
            line=7,
            fixed="""\
import torch
model = torch.nn.Linear(4, 1).to(device)
loader = torch.utils.data.DataLoader(dataset)
for x, y in loader:
    x = x.to(device)
    target = torch.zeros(x.shape[0], 1)
    target = target.to(device)
    loss = torch.nn.functional.mse_loss(model(x), target)
""",
        ),
        # the same Dataset over tensors the caller left on the CPU
        Invalid(
            """\
import torch
class Pairs(torch.utils.data.Dataset):
    def __init__(self, x, y):
        self.x = torch.tensor(x).float()
        self.y = torch.tensor(y).float()
    def __getitem__(self, i):
        return self.x[i], self.y[i]
X = torch.tensor(x).float()
model = Net().to(device)
loader = torch.utils.data.DataLoader(Pairs(X, y), batch_size=2)
for xb, yb in loader:
    loss = criterion(model(xb), yb)
""",
            line=12,
            fixed="""\
import torch
class Pairs(torch.utils.data.Dataset):
    def __init__(self, x, y):
        self.x = torch.tensor(x).float()
        self.y = torch.tensor(y).float()
    def __getitem__(self, i):
        return self.x[i], self.y[i]
X = torch.tensor(x).float()
model = Net().to(device)
loader = torch.utils.data.DataLoader(Pairs(X, y), batch_size=2)
for xb, yb in loader:
    xb = xb.to(device)
    loss = criterion(model(xb), yb)
""",
        ),
    ]

    def visit_Module(self, node: cst.Module) -> None:
        self.skip = any(self.ctx.imports.imports_module(m) for m in LAUNCHER_LIBRARIES)

    def visit_For(self, node: cst.For) -> None:
        if self.skip:
            return
        found = _loader_iter(self.ctx, node.iter)
        if found is None:
            return
        target: cst.BaseExpression = node.target
        if found[1]:  # enumerate(loader): the first element is the index
            if not isinstance(target, cst.Tuple) or len(target.elements) != 2:
                return
            target = target.elements[1].value
        unmoved = dict.fromkeys(target_names(target))
        if unmoved and not _built_on_device(self.ctx, found[0]):
            _LoopCheck(self, node, unmoved).run()


def _assigned_value(ctx: FileContext, name: str | None) -> cst.BaseExpression | None:
    """The value last assigned to `name` anywhere in the file (flow-insensitive)."""
    value = None
    if name:
        for assign in ctx.call_sites.assigns:  # every assignment of the file, in source order
            if any(dotted(t.target) == name for t in assign.targets):
                value = assign.value
    return value


def _built_on_device(ctx: FileContext, loader: cst.BaseExpression) -> bool:
    """`DataLoader(TensorDataset(x.to(device), ...))`, a Dataset that puts its samples on the device
    (dataset_storage.device_samples), or a project `collate_fn` that moves each batch: the batches are
    already there."""
    value = _assigned_value(ctx, dotted(loader))
    if not isinstance(value, cst.Call):
        return False
    if contains_move(value, ctx.imports) or _collates_on_device(ctx, value):
        return True
    dataset = value.args[0].value if value.args else None
    inner = _assigned_value(ctx, dotted(dataset)) if dataset is not None else None
    if inner is not None and contains_move(inner, ctx.imports):
        return True
    storage = dataset if isinstance(dataset, cst.Call) else inner
    if (
        isinstance(storage, cst.Call)
        and ctx.imports.qualname(storage.func) == "torch.utils.data.TensorDataset"
        and storage.args
        and all(_tensor_on_device(ctx, a.value, _where(ctx, storage)) for a in storage.args)
    ):
        return True  # `TensorDataset(x, y)` over tensors made with `device=device` or moved before
    built = ctx.values.builder(dataset, current_where(ctx)) if dataset is not None else None
    found = instantiated_class(ctx, built[0]) if built is not None else None
    samples = device_samples(ctx.semantics.class_kinds(found[0]), found[1]) if found is not None else None
    if samples is None or built is None:
        return False
    call, where = built  # `MyDataset(X, Y)` copying its arguments: on the device when they are
    if any(a.star for a in call.args):
        return False
    arguments = [get_arg(call, name, index) for index, name in samples.arguments]
    return all(a is not None and _tensor_on_device(ctx, a.value, where) for a in arguments)


def _collates_on_device(ctx: FileContext, loader: cst.Call) -> bool:
    """`DataLoader(..., collate_fn=f)` with `f` a project function that returns its batch moved to a device."""
    arg = get_arg(loader, "collate_fn")
    found = ctx.semantics.function_definition(arg.value) if arg is not None else None
    return found is not None and collate_on_device(found[1]) is not None


def _tensor_on_device(ctx: FileContext, expr: cst.BaseExpression, where: Where | None, depth: int = 0) -> bool:
    """`expr` (evaluated at `where`), or the value its name holds there (else the last one assigned in the
    file), is a tensor placed on a device, or an index of one (`x_all[train]`); unknown is False."""
    value: cst.BaseExpression | None = expr
    if isinstance(expr, cst.Name):
        found = ctx.values.value_of(expr, where) if where is not None else None
        value, where = found if found is not None else (_assigned_value(ctx, expr.value), None)
    if isinstance(value, cst.Subscript) and depth < 3:
        return _tensor_on_device(ctx, value.value, where, depth + 1)
    return value is not None and placed_on_device(value, ctx.imports)


def _where(ctx: FileContext, call: cst.Call) -> Where | None:
    """Where `call` of this file is evaluated (None: not one of its calls)."""
    site = next((s for s in ctx.call_sites.calls if s.call is call), None)
    return where_of(site) if site is not None else None


class _LoopCheck:
    """Walks one loader loop in source order, tracking which names still hold CPU batch data."""

    def __init__(self, rule: InputNotMovedToDevice, loop: cst.For, unmoved: dict[str, str | None]) -> None:
        self.rule = rule
        self.ctx = rule.ctx
        self.moves = rule.ctx.device_moves
        self.at = rule.ctx.scope_node  # where the loop's names resolve
        self.loop = loop
        self.unmoved = unmoved  # name -> None (a batch) or the factory that made it (`randn`)
        self.model_move: Move | None = None  # the move of the model called so far in this iteration
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
            if isinstance(expr, cst.BinaryOperation):  # `x + noise`: a CPU operand keeps the result there
                return self._carrier(expr.left) or self._carrier(expr.right)
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
        moved = contains_move(value, self.ctx.imports)
        origin = None if moved else self._carrier(value)
        created = None if moved else self._created(value)
        for name in target_names(target):
            if origin is not None:
                self.unmoved[name] = self.unmoved[origin]
            elif created is not None:
                self.unmoved[name] = created
            else:
                self.unmoved.pop(name, None)

    def _created(self, expr: cst.BaseExpression) -> str | None:
        """The factory (`randn`) if `expr` is a new tensor on the default device: `torch.randn(n) * 0.1`."""
        while (
            isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _SAME_DEVICE
        ):
            expr = expr.func.value
        if isinstance(expr, cst.BinaryOperation):
            return self._created(expr.left) or self._created(expr.right)
        return default_device_factory(expr, self.ctx.imports) if isinstance(expr, cst.Call) else None

    # -- calls ------------------------------------------------------------
    def _moved_model(self, call: cst.Call) -> Move | None:
        """The move that put the called model on an accelerator (`model.to("cpu")` keeps it with its batches)."""
        moves = self.moves.of(dotted(call.func), self.at, call)
        moves = [m for m in moves if device_type(m.device, self.ctx.imports) != "cpu"]
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

    def _library_apis(self, call: cst.Call) -> Iterator[str | None]:
        """What the call runs, as library names: the function, or the class its module was built from
        (here, or in the move that put it on the device: `CTCLoss().to(device)`)."""
        yield self.ctx.qualname(call.func)
        built = self.ctx.values.builder(call.func, current_where(self.ctx))
        receivers = [
            m.call.func.value
            for m in self.moves.of(dotted(call.func), self.at, call)
            if isinstance(m.call.func, cst.Attribute)
        ]
        for b in (built[0] if built else None, *receivers):
            if isinstance(b, cst.Call):
                yield self.ctx.qualname(b.func)

    def _check_args(self, call: cst.Call, move: Move, stmt: cst.BaseStatement) -> None:
        cpu_positions, cpu_keywords = (
            self.ctx.forward_arguments_left_unmoved if self._moved_model(call) else (set(), set())
        )
        apis = list(self._library_apis(call))
        if self._moved_model(call) and moves_its_inputs(apis):
            return  # `DataParallel(model).cuda()(x)` scatters a CPU `x` to the GPU itself
        api_positions, api_keywords = cpu_arguments_of(apis)
        cpu_positions, cpu_keywords = cpu_positions | api_positions, cpu_keywords | api_keywords
        positional = [a for a in call.args if a.keyword is None and not a.star]
        for arg in call.args:
            if (arg.keyword is not None and arg.keyword.value in cpu_keywords) or (
                arg in positional and positional.index(arg) in cpu_positions
            ):
                continue  # lengths kept on the CPU (pack_padded_sequence, CTC), or moved by `forward` itself
            name = self._carrier(arg.value)
            if name is None or name in self.reported:
                continue
            self.reported.add(name)
            model = dotted(call.func) if self._moved_model(call) else move.target
            created = self.unmoved[name]
            template = self.rule.message if created is None else _CREATED_MESSAGE
            message = template.format(name=name, model=model, suffix=move.suffix, fn=created)
            edit = None
            # `.to()` exists on a tensor; a batch element is usually one, but may be a list or a dict
            kind = self.ctx.kind(arg.value)
            if (
                isinstance(arg.value, cst.Name)
                and not arg.star
                and isinstance(stmt, cst.SimpleStatementLine)
                and self._visible(move)
                and kind & (Kind.TENSOR | Kind.BATCH)
            ):
                edit = fix(
                    f"Insert `{name} = {name}{move.suffix}`",
                    InsertBefore(stmt, f"{name} = {name}{move.suffix}"),
                    applicability=SAFE if kind & Kind.TENSOR else UNSAFE,
                    risk="a batch that is a list or dict has no `.to()`",
                )
            self.rule.report(arg.value, message, fix=edit)

    def _visible(self, move: Move) -> bool:
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
                names.update(n for t in small.targets for n in target_names(t.target))
    return names
