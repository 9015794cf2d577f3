"""TL303 hard-coded-cuda: `.cuda()` / `.to("cuda")` / `device="cuda"` without an availability guard"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.callargs import get_arg, int_value, string_value
from torchlint.engine.kinds import ACCELERATOR_CHECKS, DEVICE_TYPES
from torchlint.engine.names import dotted
from torchlint.engine.rule import Invalid, Rule
from torchlint.engine.walk import block_statements, iter_nodes, small_statements
from torchlint.findings import Severity


class _GuardTest:
    """Does a test look at the accelerator? Evidence only, never a name: a call of an availability API
    (`torch.cuda.is_available()`), a comparison with a device string (`device.type == "cuda"`,
    `args.device != "cpu"`), a command-line flag (an attribute of `parser.parse_args()`: the user chose),
    or a name assigned one of these (`use_cuda = torch.cuda.is_available() and not args.no_cuda`)."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self._assigned: dict[str, list[cst.BaseExpression]] | None = None

    def __call__(self, expr: cst.CSTNode, depth: int = 0) -> bool:
        for n in (expr, *iter_nodes(expr)):
            if isinstance(n, cst.Call) and self.ctx.qualname(n.func) in ACCELERATOR_CHECKS:
                return True
            if isinstance(n, cst.Comparison) and any(
                _device_string(e) for e in (n.left, *(c.comparator for c in n.comparisons))
            ):
                return True
            if isinstance(n, cst.Attribute) and n.attr.value in ("is_cuda", "is_mps"):
                return True  # where a tensor or module already is
            if isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name) and self._is_flags(n.value.value):
                return True
            if isinstance(n, cst.Name) and depth < 3:
                if any(self(value, depth + 1) for value in self.assigned().get(n.value, ())):
                    return True
        return False

    def assigned(self) -> dict[str, list[cst.BaseExpression]]:
        """Every value assigned to each plain name in the file."""
        if self._assigned is None:
            self._assigned = {}
            for assign in self.ctx.call_sites.assigns:
                for t in assign.targets:
                    if isinstance(t.target, cst.Name):
                        self._assigned.setdefault(t.target.value, []).append(assign.value)
        return self._assigned

    def _is_flags(self, name: str) -> bool:
        return any(
            isinstance(v, cst.Call) and isinstance(v.func, cst.Attribute) and v.func.attr.value == "parse_args"
            for v in self.assigned().get(name, ())
        )


def _device_string(expr: cst.BaseExpression) -> bool:
    text = string_value(expr) if isinstance(expr, cst.SimpleString) else None
    return text is not None and text.partition(":")[0] in DEVICE_TYPES


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


def _guarded_block(body, tests: _GuardTest) -> bool:
    """`assert torch.cuda.is_available()` or `if not ...: raise` among these statements."""
    for s in body:
        for small in small_statements(s):
            if isinstance(small, cst.Assert) and tests(small.test):
                return True
        if isinstance(s, cst.If) and tests(s.test) and _exits(block_statements(s.body)):
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
    category = "style"
    summary = '`.cuda()` / `.to("cuda")` / `device="cuda"` without an availability guard'
    what = (
        'Flags `.cuda()`, `.to("cuda")` and `device="cuda"` on tensors and modules that are not under an '
        "`if` (or conditional expression, or function/file-level guard) that checks CUDA availability or "
        "a device choice: a call such as `torch.cuda.is_available()`, a comparison with a device string "
        '(`device.type == "cuda"`), a command-line flag (`args.cuda` from `parser.parse_args()`), or a '
        "variable assigned one of these. A variable's name is not evidence (`use_gpu = True` guards "
        'nothing). A device variable (`.to(device)`, even `device = torch.device("cuda")`) is not '
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
        "import torch\nargs = parser.parse_args()\nx = x.cuda() if args.cuda else x\n",
        "import torch\nuse_gpu = torch.cuda.device_count() > 0\nif use_gpu:\n    model.cuda()\n",
        'import torch\nif device.type == "cuda":\n    model.cuda()\n',
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
        self.tests = _GuardTest(self.ctx)
        self.file_guarded = "cuda" not in self.ctx.text or _guarded_block(node.body, self.tests)

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
        if self.file_guarded or any(self.tests(test) for test in self.guards):
            return True
        for fn in self.ctx.functions:
            if fn.name.value in ("cuda", "to", "_apply"):
                return True  # implementing `.cuda()` for a container type: the caller chose CUDA
            if any(self.tests(d.decorator) for d in fn.decorators):
                return True
            if isinstance(fn.body, cst.IndentedBlock) and _guarded_block(fn.body.body, self.tests):
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
