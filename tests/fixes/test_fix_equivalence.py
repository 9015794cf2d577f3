"""The equivalence harness (issue 27 item 4): a runnable variant of a fixable rule's INVALID example is
run before and after `--fix` (safe fixes only, that rule alone), on the CPU with a fixed seed. The
outputs (printed text, tensors, numbers, modules' state_dict) must match, or the "before" must raise
the error the rule names and the "after" must not. A safe fix that fails it fails here.

A fix that changes results on purpose (the old result is the bug: a snapshot that aliases the live
weights, a comparison that is always False) is run against a `reference`: the same program written
right by hand, another way than the fix writes it. The fixed program's outputs must equal the
reference's, and the unfixed program's must not (else the variant does not show the bug).

Every rule with a safe fix on its examples has a program here or a reason in NOT_RUN
(test_every_rule_with_a_safe_fix_is_run), so a new rule's safe fix cannot go unrun.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from dataclasses import dataclass

import pytest

from torchlint.engine import fix_text, lint_text
from torchlint.findings import Applicability
from torchlint.registry import rules

torch = pytest.importorskip("torch")


@dataclass(frozen=True)
class Program:
    code: str
    source: str
    raises: str | None = None  # the error the rule names, raised before the fix
    torch_version: str | None = None
    reference: str | None = None  # the program written right by hand: what the fixed one must output
    name: str = ""  # tells two programs of one rule apart

    @property
    def id(self) -> str:
        return f"{self.code}-{self.name}" if self.name else self.code


PROGRAMS = [
    Program(
        "TL701",
        """\
import torch
import torch.nn.functional as F
x = torch.randn(1, 1, 4, 4)
y = F.upsample(x, scale_factor=2, mode="nearest")
flag = False
with torch.cuda.amp.autocast(flag):
    z = (y * 2).sum()
""",
        torch_version="2.4",
        name="calls",
    ),
    Program("TL710", "import torch\na = torch.randn(4, 4)\nr = torch.matrix_rank(a)\n", raises="RuntimeError"),
    Program(
        "TL703",
        """\
import torch
rnn = torch.nn.GRU(4, 4)
h = torch.zeros(1, 2, 4)
outs = []
for step in range(3):
    out, h = rnn(torch.randn(5, 2, 4), h)
    h = h.data
    out.sum().backward()
    outs.append(out.sum().item())
""",
    ),
    Program(
        "TL708",
        """\
import torch
model = torch.nn.Linear(3, 1)
criterion = torch.nn.MSELoss()
loss = criterion(model(torch.randn(4, 3)), torch.randn(4, 1))
loss.backward()
value = loss.data[0]
""",
        raises="IndexError",
    ),
    Program(
        "TL107",
        """\
import torch
backbone = torch.nn.Linear(4, 4)
head_a, head_b = torch.nn.Linear(4, 2), torch.nn.Linear(4, 1)
features = backbone(torch.randn(8, 4))
loss_a = head_a(features).pow(2).mean()
loss_b = head_b(features).abs().mean()
loss_a.backward()
loss_b.backward()
grad = backbone.weight.grad.clone()
""",
        raises="RuntimeError",
    ),
    Program(
        "TL204",
        """\
from torch import nn
class Net(nn.Module):
    def __init__(self):
        self.fc = nn.Linear(4, 2)
    def forward(self, x):
        return self.fc(x)
net = Net()
""",
        raises="AttributeError",
    ),
    Program(
        "TL203",
        "import torch\nmodel = torch.nn.Linear(4, 2)\ny = model.forward(torch.randn(3, 4))\n",
    ),
    Program(
        "TL201",
        """\
import torch
from torch import nn
class Rotary(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.cache = torch.zeros(4)
    def forward(self, x):
        if self.cache.numel() != x.size(-1) + 1:
            self.cache = torch.arange(x.size(-1)).float()
        return self.proj(x) + self.cache
model = Rotary()
out = model(torch.randn(2, 4))
""",
    ),
    Program(
        "TL110",
        """\
import torch
def evaluate(model: torch.nn.Module, loader):
    model.eval()
    correct = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct
loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(3)]
correct = evaluate(torch.nn.Linear(4, 2), loader)
""",
    ),
    Program(
        "TL113",
        """\
import torch
torch.autograd.set_detect_anomaly(True)
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    opt.zero_grad()
    model(torch.randn(8, 4)).pow(2).mean().backward()
    opt.step()
""",
    ),
    Program(
        "TL117",
        """\
import torch
model = torch.nn.Linear(16, 4)
predictions = []
for x in [torch.randn(2, 16) for _ in range(3)]:
    logits = model(x)
    predictions.append(logits)
scores = torch.cat(predictions).softmax(-1)
""",
    ),
    Program("TL801", "import torch\nx = torch.rand(16)\ny = torch.log(1 + x)\n"),
    Program("TL802", "import torch\nt = torch.rand(16)\ny = torch.exp(-t) - 1.0\n"),
    Program(
        "TL304",
        """\
import torch
from torch import nn
device = "cuda" if torch.cuda.is_available() else "cpu"
class Mask(nn.Module):
    def forward(self, x):
        mask = torch.ones(x.size(0), x.size(1))
        return x * mask
model = Mask().to(device)
out = model(torch.randn(2, 3, device=device))
""",
    ),
    Program(
        "TL120",
        "import torch\nw = torch.randn(3, requires_grad=True)\nw.add_(1.0)\nloss = (w * 2).sum()\n",
        raises="RuntimeError",
    ),
    Program(
        "TL118",
        """\
import torch
from torch import nn
device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Linear(16, 4).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(4, 16), torch.randint(0, 4, (4,))) for _ in range(5)]
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x.to(device)), y.to(device))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    loss_value = loss.item()
    if step % 2 == 0:
        print(f"step {step}: loss {loss_value:.4f}")
""",
    ),
    Program(
        "TL305",
        """\
import torch
device = "cuda" if torch.cuda.is_available() else "cpu"
h = torch.randn(2, 3, 4, 5, device=device)
flat = h.permute(0, 2, 3, 1).view(h.size(0), -1)
""",
        raises="RuntimeError",
    ),
    Program(
        "TL707",
        """\
import torch
from torch.utils.data import DataLoader, TensorDataset
loader = DataLoader(TensorDataset(torch.arange(6.0)), batch_size=2)
data_iter = iter(loader)
(first,) = data_iter.next()
""",
        raises="AttributeError",
    ),
    Program(
        "TL404",
        """\
import torch
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
dataset = TensorDataset(torch.arange(8.0))
loader = DataLoader(dataset, batch_size=4, shuffle=True, sampler=DistributedSampler(dataset, 1, 0, shuffle=False))
batches = [b[0] for b in loader]
""",
        raises="ValueError",
    ),
    Program(
        "TL121",
        """\
import torch
from torch import nn
model = nn.Linear(4, 2)
params = model.parameters()
total = sum(p.numel() for p in params)
model(torch.randn(8, 4)).pow(2).sum().backward()
norm = nn.utils.clip_grad_norm_(params, max_norm=0.1)
""",
        reference="""\
import torch
from torch import nn
model = nn.Linear(4, 2)
total = sum(p.numel() for p in model.parameters())
model(torch.randn(8, 4)).pow(2).sum().backward()
norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.1)
""",
    ),
    Program(
        "TL307",
        """\
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
rnn = nn.GRU(3, 4, batch_first=True).to(device)
batch = [(torch.randn(2, 5, 3), torch.tensor([5, 3]))]
for x, lengths in batch:
    x, lengths = x.to(device), lengths.to(device)
    packed = pack_padded_sequence(x, lengths, batch_first=True)
    out, h = rnn(packed)
""",
    ),
    Program(
        "TL308",
        """\
import torch
x = torch.zeros(3)
device = torch.device("cpu")
if device != "cpu":
    y = x + 1
else:
    y = x - 1
accelerated = x.device in ("cuda", "mps")
""",
        reference="""\
import torch
x = torch.zeros(3)
device = torch.device("cpu")
if device != torch.device("cpu"):
    y = x + 1
else:
    y = x - 1
accelerated = x.is_cuda or x.is_mps
""",
    ),
    Program(
        "TL605",
        """\
import copy
import torch
model = torch.nn.Linear(2, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
init = model.state_dict()
for step in range(3):
    optimizer.zero_grad()
    model(torch.randn(4, 2)).pow(2).mean().backward()
    optimizer.step()
model.load_state_dict(init)
""",
        reference="""\
import io
import torch
model = torch.nn.Linear(2, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
saved = io.BytesIO()
torch.save(model.state_dict(), saved)
for step in range(3):
    optimizer.zero_grad()
    model(torch.randn(4, 2)).pow(2).mean().backward()
    optimizer.step()
saved.seek(0)
model.load_state_dict(torch.load(saved))
""",
        name="deepcopy",
    ),
    Program(
        "TL605",
        """\
import torch
model = torch.nn.Linear(2, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
best = None
for step in range(3):
    optimizer.zero_grad()
    loss = model(torch.randn(4, 2)).pow(2).mean()
    loss.backward()
    optimizer.step()
    if step == 1:
        best = model.state_dict()
model.load_state_dict(best)
""",
        reference="""\
import torch
model = torch.nn.Linear(2, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
best = None
for step in range(3):
    optimizer.zero_grad()
    loss = model(torch.randn(4, 2)).pow(2).mean()
    loss.backward()
    optimizer.step()
    if step == 1:
        best = {name: torch.tensor(t.tolist()) for name, t in model.state_dict().items()}
model.load_state_dict(best)
""",
        name="clone",
    ),
    Program(
        "TL806",
        """\
import torch
import torch.nn.functional as F
from torch import nn
p = torch.rand(8)
labels = torch.randint(0, 2, (8,))
a = F.binary_cross_entropy(p, labels.long())
t = torch.ones(8, dtype=torch.long)
b = nn.BCELoss()(p, target=t)
c = F.binary_cross_entropy_with_logits(torch.randn(2), torch.tensor([0, 1]))
""",
        raises="RuntimeError",
        reference="""\
import torch
import torch.nn.functional as F
from torch import nn
p = torch.rand(8)
labels = torch.randint(0, 2, (8,))
a = F.binary_cross_entropy(p, labels.to(torch.float32))
t = torch.ones(8, dtype=torch.long)
b = nn.BCELoss()(p, target=t.to(torch.float32))
c = F.binary_cross_entropy_with_logits(torch.randn(2), torch.tensor([0.0, 1.0]))
""",
    ),
    Program(
        "TL808",
        """\
import torch
import torch.nn.functional as F
x = torch.randn(4, 5)
a = torch.log(F.softmax(x, dim=1))
b = torch.log(torch.sigmoid(x))
c = (x + 1).sigmoid().log()
d = x.softmax(-1).log()
""",
    ),
    Program(
        "TL701",
        """\
import torch
from torch import nn
import torch.nn.functional as F
x, y = torch.randn(4, 3), torch.randn(4, 3)
l1 = nn.MSELoss(size_average=False)(x, y)
l2 = nn.L1Loss(reduce=False)(x, y)
l3 = F.mse_loss(x, y, size_average=True)
l4 = nn.SmoothL1Loss(size_average=False, reduce=True)(x, y)
""",
        name="reduction",
    ),
    Program(
        "TL701",
        """\
import torch
a = torch.randn(4, 4)
spd = a @ a.T + 4 * torch.eye(4)
b = torch.randn(4, 2)
lu, piv = torch.linalg.lu_factor(spd)
n1 = torch.norm(b, 2, 1)
n2 = torch.norm(b, p=1, dim=0, keepdim=True)
q, r = torch.qr(input=a, some=False)
u = torch.cholesky(spd, True)
x = torch.lu_solve(b, LU_data=lu, LU_pivots=piv)
m = torch.chain_matmul(a, spd, a)
""",
        name="linalg",
    ),
    Program(
        "TL712",
        """\
import torch
model = torch.nn.Linear(4, 2)
if torch.cuda.is_available():
    model = model.to("cuda")
use_amp = False
with torch.autocast(enabled=use_amp):
    y = model(torch.randn(3, 4))
""",
        raises="TypeError",
        reference="""\
import torch
model = torch.nn.Linear(4, 2)
if torch.cuda.is_available():
    model = model.to("cuda")
use_amp = False
y = model(torch.randn(3, 4))
""",
    ),
]


def _run(source: str) -> tuple[str | None, dict[str, object]]:
    """(the error raised, or None; the program's printed text and global values)."""
    namespace: dict[str, object] = {"__name__": "__main__"}
    out = io.StringIO()
    torch.manual_seed(0)
    error = None
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(compile(source, "program.py", "exec"), namespace)
        except Exception as exc:
            error = type(exc).__name__
    values = {k: _value(v) for k, v in namespace.items() if not k.startswith("__") and _value(v) is not None}
    return error, {"stdout": out.getvalue(), **values}


def _value(v: object) -> object:
    """What of a global is output: tensors, numbers, strings and lists of them, a module's state_dict."""
    if isinstance(v, torch.nn.Module):
        return {k: t.detach().clone() for k, t in v.state_dict().items()}
    if isinstance(v, torch.Tensor):
        return v.detach().clone()
    if isinstance(v, (int, float, str, bool)):
        return v
    if isinstance(v, (list, tuple)) and all(isinstance(x, (int, float, torch.Tensor)) for x in v):
        return [_value(x) for x in v]
    return None


def _same(a: object, b: object) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and torch.allclose(a, b, equal_nan=True)
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.id for p in PROGRAMS])
def test_safe_fix_keeps_the_outputs_or_removes_the_named_error(program):
    result = fix_text("program.py", program.source, [rules()[program.code]], torch_version=program.torch_version)
    assert result.applied >= 1, f"{program.code} offered no safe fix on its runnable variant"
    before_error, before = _run(program.source)
    after_error, after = _run(result.text)
    assert after_error is None, f"the fixed program raises {after_error}:\n{result.text}"
    if program.raises is not None:
        assert before_error == program.raises
    else:
        assert before_error is None
    if program.reference is not None:
        reference_error, reference = _run(program.reference)
        assert reference_error is None
        assert _differ(after, reference, set(reference)) == [], f"not the reference's outputs:\n{result.text}"
        assert program.raises is not None or _differ(before, reference, set(reference)), "the variant shows no bug"
    elif program.raises is None:
        assert _differ(before, after, set(before) | set(after)) == [], f"outputs differ after the fix:\n{result.text}"


def _differ(a: dict[str, object], b: dict[str, object], names: set[str]) -> list[str]:
    """Those of `names` that one run lacks or the two give different values for (a reference names
    what the program should output; the fixed program may keep other values beside them)."""
    return sorted(k for k in names if k not in a or k not in b or not _same(a[k], b[k]))


# Rules with a safe fix that no program above runs, each with the reason. A rule leaves this table
# when a program for it is written; a new rule's safe fix must get a program (or a reason here).
_NO_REFERENCE_YET = "changes results on purpose; a reference program is not written yet"
NOT_RUN = {
    "TL101": _NO_REFERENCE_YET,
    "TL102": _NO_REFERENCE_YET,
    "TL103": _NO_REFERENCE_YET,
    "TL105": _NO_REFERENCE_YET,
    "TL108": "needs an enabled GradScaler, which scales on CUDA only",
    "TL109": _NO_REFERENCE_YET,
    "TL111": _NO_REFERENCE_YET,
    "TL112": "needs an enabled GradScaler, which scales on CUDA only",
    "TL114": "torch.cuda.empty_cache() without CUDA: nothing to compare",
    "TL115": _NO_REFERENCE_YET,
    "TL116": _NO_REFERENCE_YET,
    "TL301": "the move is to a GPU: an identity on the CPU",
    "TL302": "the move is to a GPU: an identity on the CPU",
    "TL306": "the move is to a GPU: an identity on the CPU",
    "TL401": "needs a process group",
    "TL403": _NO_REFERENCE_YET,
    "TL602": _NO_REFERENCE_YET,
    "TL704": "needs torchvision, which is not installed here",
    "TL706": _NO_REFERENCE_YET,
}


def _safely_fixable() -> set[str]:
    """The rules whose INVALID examples get a safe fix (a first fix or an alternative)."""
    out = set()
    for code, cls in rules().items():
        for ex in cls.INVALID:
            for f in lint_text("example.py", ex.source, [cls], torch_version=ex.torch_version).findings:
                if any(fx is not None and fx.applicability is Applicability.SAFE for fx in (f.fix, *f.alternatives)):
                    out.add(code)
    return out


def test_every_rule_with_a_safe_fix_is_run():
    run = {p.code for p in PROGRAMS}
    fixable = _safely_fixable()
    assert sorted(fixable - run - set(NOT_RUN)) == [], "safe fixes no program runs: write one"
    assert sorted(run & set(NOT_RUN)) == [], "rules run above and said not to be"
    assert sorted(set(NOT_RUN) - fixable) == [], "rules with no safe fix left in NOT_RUN"
