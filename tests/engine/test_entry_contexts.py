"""Calling contexts (calling_context.py): a function's grad mode, frequency, CUDA guard and rank are the join over
its call sites — in its file and in the project files that import it — and unknown callers make them unknown."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from torchlint.engine.context import FileContext
from torchlint.engine.flow.calling_context import Frequency
from torchlint.engine.flow.no_grad_callers import runs_without_grad


def _ctx(code: str, path: str = "t.py") -> FileContext:
    return FileContext(path, code, cst.parse_module(code))


def _fn(ctx: FileContext, name: str) -> cst.FunctionDef:
    (found,) = [f for f, _ in ctx.call_sites.functions[name]]
    return found


def _body(ctx: FileContext, name: str):
    fn = _fn(ctx, name)
    return ctx.calling_contexts.at(fn.body, fn)


GRAD = """\
import torch

def off(): pass
def off_flag(): pass
def on_again(): pass
def mixed(): pass
def callback(): pass
def unknown_flag(): pass
def nobody(): pass
def through(): pass
def middle(): through()
def recursive(n):
    if n:
        recursive(n - 1)

@torch.no_grad()
def decorated():
    middle()

def main():
    with torch.no_grad():
        off()
        mixed()
        with torch.enable_grad():
            on_again()
        run(callback)
        recursive(3)
    with torch.set_grad_enabled(False):
        off_flag()
    with torch.set_grad_enabled(flag):
        unknown_flag()
    mixed()
    decorated()

main()
"""


@pytest.mark.parametrize(
    "name,grad_off",
    [
        ("off", True),
        ("off_flag", True),  # set_grad_enabled(False) turns it off like no_grad
        ("on_again", False),  # enable_grad inside no_grad
        ("mixed", None),  # one call each way
        ("callback", None),  # handed on as a value: may run anywhere
        ("unknown_flag", None),  # set_grad_enabled(flag): either
        ("nobody", None),  # no caller known
        ("decorated", True),
        ("through", True),  # two helpers down from a decorated function
        ("recursive", True),  # its own call adds nothing: the recursion stops
        ("main", False),  # called at module level: autograd on
    ],
)
def test_grad_mode_is_joined_over_every_call(name, grad_off):
    assert _body(_ctx(GRAD), name).grad_off is grad_off


FREQUENCY = """\
import torch

def validate(): pass
def log(): pass
def every(): pass
def setup(): pass
def nested(): pass
def helper(): nested()
def on_error(): pass
def on_rank0(): pass
def main():
    setup()
    for step, batch in enumerate(loader):
        every()
        helper()
        if step % 100 == 0:
            validate()
        log() if step % 10 == 0 else None
        try:
            step_once(batch)
        except RuntimeError:
            on_error()
        if torch.distributed.get_rank() == 0:
            on_rank0()

if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize(
    "name,frequency,rare",
    [
        ("validate", Frequency.CONDITIONAL, True),
        ("log", Frequency.CONDITIONAL, True),
        ("on_error", Frequency.CONDITIONAL, True),
        ("every", Frequency.EVERY, False),
        ("nested", Frequency.EVERY, False),  # through a helper called every step
        ("setup", Frequency.ONCE, True),
        ("main", Frequency.ONCE, True),  # the main guard is no condition
    ],
)
def test_frequency_comes_from_the_guard_below_the_loop(name, frequency, rare):
    context = _body(_ctx(FREQUENCY), name)
    assert context.frequency is frequency
    assert context.rare is rare


def test_rank_zero_only_through_the_callers_guard():
    ctx = _ctx(FREQUENCY)
    assert _body(ctx, "on_rank0").rank0
    assert not _body(ctx, "every").rank0


CUDA = """\
import sys
import torch
import torch.distributed as dist

def init_distributed():
    dist.init_process_group(backend="nccl")

def init_gloo():
    dist.init_process_group(backend="gloo")

def check():
    if not torch.cuda.is_available():
        sys.exit("needs a GPU")

def maybe():
    if not torch.cuda.is_available():
        return

def guarded_helper(): pass
def after_nccl(): pass
def after_gloo(): pass
def after_check(): pass
def after_maybe(): pass
def flagged(): pass

args = parser.parse_args()

def main():
    if torch.cuda.is_available():
        guarded_helper()
    if args.wgan:
        flagged()
    init_gloo()
    after_gloo()
    maybe()
    after_maybe()
    check()
    after_check()

def train():
    init_distributed()
    after_nccl()
"""


@pytest.mark.parametrize(
    "name,cuda",
    [
        ("guarded_helper", True),
        ("after_nccl", True),  # NCCL needs GPUs
        ("after_check", True),  # the helper exits without one
        ("after_gloo", False),
        ("after_maybe", False),  # its `return` lets the caller go on without a GPU
        ("flagged", False),  # a command-line flag around a call says nothing about the callee's device code
    ],
)
def test_cuda_known_from_guards_and_gpu_only_setup(name, cuda):
    assert _body(_ctx(CUDA), name).cuda is cuda


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def _file_ctx(path: Path) -> FileContext:
    return _ctx(path.read_text(), str(path))


UTILS = """\
import torch
import torch.distributed as dist

def evaluate(model, loader):
    for x in loader:
        model(x)

def setup(args):
    dist.init_process_group(backend="nccl")

def shared(): pass
"""
MAIN = """\
import torch
import utils
from utils import evaluate, shared

def main(args):
    utils.setup(args)
    model = torch.nn.Linear(2, 2).cuda()
    for step, x in enumerate(loader):
        if step % 10 == 0:
            with torch.no_grad():
                evaluate(model, loader)
    hooks.append(shared)

main(None)
"""


def test_callers_in_other_files_decide_the_entry(tmp_path):
    root = _project(tmp_path, {"utils.py": UTILS, "main.py": MAIN})
    utils = _file_ctx(root / "utils.py")
    evaluate = _body(utils, "evaluate")
    assert evaluate.grad_off is True
    assert evaluate.frequency is Frequency.CONDITIONAL
    assert runs_without_grad(utils, _fn(utils, "evaluate"))  # the rules' question (TL110, TL117)
    assert _body(utils, "shared").grad_off is None  # handed on as a value in main.py


def test_a_gpu_only_setup_helper_in_another_file_guards_the_caller(tmp_path):
    root = _project(tmp_path, {"utils.py": UTILS, "main.py": MAIN})
    main = _file_ctx(root / "main.py")
    (call,) = [s.call for s in main.call_sites.calls if main.module.code_for_node(s.call).endswith(".cuda()")]
    assert main.calling_contexts.at(call, _fn(main, "main")).cuda


def test_calls_through_files_that_call_each_other_terminate(tmp_path):
    root = _project(
        tmp_path,
        {
            "a.py": "import b\n\ndef ping(n):\n    b.pong(n)\n",
            "b.py": "import torch\nimport a\n\ndef pong(n):\n    with torch.no_grad():\n        a.ping(n)\n",
        },
    )
    a = _file_ctx(root / "a.py")
    assert _body(a, "ping").grad_off is True  # its only caller is under no_grad; the cycle adds nothing


@pytest.mark.parametrize(
    "test",
    [
        "isinstance(out.data, torch.cuda.FloatTensor)",
        "isinstance(out, (torch.cuda.HalfTensor, torch.cuda.FloatTensor))",
        'out.type() == "torch.cuda.FloatTensor"',
        'out.device.type == "cuda"',
        "out.is_cuda",
    ],
)
def test_a_test_of_where_the_data_is_guards_cuda(test):
    # true only for a tensor already on a GPU: the branch runs with CUDA there (3D-ResNets' zero padding)
    src = f"import torch\ndef pad(out, z):\n    if {test}:\n        z = z.cuda()\n    return z\n"
    ctx = _ctx(src)
    (call,) = [s.call for s in ctx.call_sites.calls if ctx.module.code_for_node(s.call) == "z.cuda()"]
    assert ctx.calling_contexts.at(call, _fn(ctx, "pad")).cuda


def test_a_cpu_tensor_type_test_is_no_cuda_guard():
    src = "import torch\ndef pad(out, z):\n    if isinstance(out, torch.FloatTensor):\n        z = z.cuda()\n    return z\n"
    ctx = _ctx(src)
    (call,) = [s.call for s in ctx.call_sites.calls if ctx.module.code_for_node(s.call) == "z.cuda()"]
    assert not ctx.calling_contexts.at(call, _fn(ctx, "pad")).cuda


BLOCKS = """\
import torch
from torch import nn

class Unit(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def load_from(self, w):
        self.fc.weight.copy_(w)
"""
MODEL = """\
import torch
from torch import nn

class Net(nn.Module):
    def load_from(self, w):
        with torch.no_grad():
            for name, unit in self.named_children():
                unit.load_from(w)
"""


@pytest.mark.parametrize(
    "script,grad_off",
    [
        # the receiver's class is another one with its own `load_from`: not a caller of Unit's
        ("from model import Net\nnet = Net()\nnet.load_from(None)\n", True),
        # a receiver of unknown class outside no_grad may be a Unit: either
        ("def load(m):\n    m.load_from(None)\n", None),
        # `x.load_from` also handed on as a value: a callback may run anywhere
        (
            "import torch\ndef hooks(m):\n    with torch.no_grad():\n        m.load_from(None)\n    return [m.load_from]\n",
            None,
        ),
    ],
)
def test_a_method_is_entered_from_every_possible_caller_in_the_project(tmp_path, script, grad_off):
    # `unit.load_from(...)` in another file, on a receiver whose class is unknown (named_children), under no_grad
    root = _project(tmp_path, {"blocks.py": BLOCKS, "model.py": MODEL, "train.py": script})
    blocks = _file_ctx(root / "blocks.py")
    assert _body(blocks, "load_from").grad_off is grad_off


@pytest.mark.parametrize(
    "main,set_up",
    [
        # a helper of another file that calls init_process_group (under a branch), then the method
        ("def main(args, t):\n    setup(args)\n    t.wrap()\n\nmain(None, None)\n", True),
        ("def main(args, t):\n    t.wrap()\n    setup(args)\n\nmain(None, None)\n", False),  # nothing before
        ("def main(args, t):\n    t.wrap()\n", None),  # main has no caller: unknown
    ],
)
def test_a_process_group_set_up_before_every_call_reaches_the_callee(tmp_path, main, set_up):
    files = {
        "dist.py": "import torch\n\ndef setup(args):\n    if args.ddp:\n        torch.distributed.init_process_group()\n",
        "task.py": "import torch\n\nclass T:\n    def wrap(self):\n        return torch.nn.parallel.DistributedDataParallel(self)\n",
        "main.py": "from dist import setup\n" + main,
    }
    root = _project(tmp_path, files)
    task = _file_ctx(root / "task.py")
    assert _body(task, "wrap").process_group is set_up
