"""TL303 hard-coded-cuda: `.cuda()` / `.to("cuda")` / `device="cuda"` without an availability guard"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.callargs import get_arg, int_value, string_value
from torchlint.engine.flow.cuda_guards import guarded_exit
from torchlint.engine.rule import Invalid, Rule
from torchlint.engine.semantic.names import dotted
from torchlint.findings import Severity


class HardCodedCuda(Rule):
    code = "TL303"
    analyses = frozenset({Analysis.CALLING_CONTEXTS, Analysis.CALL_SITES, Analysis.SCOPES, Analysis.VALUES})
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
        '(`device.type == "cuda"`), a command-line flag (`args.cuda` from `parser.parse_args()`), where a '
        "tensor already is (`x.is_cuda`, `isinstance(x, torch.cuda.FloatTensor)`), or a variable assigned one of these; nor after a statement that only passes on a GPU machine "
        '(`assert torch.cuda.is_available()`, `torch.cuda.set_device(...)`, `init_process_group("nccl")`, or a '
        "call of a helper that does one of these), nor in a function every caller of which is so guarded. A "
        "test on a value the caller hands in is the caller's device choice: a parameter (`if train_on_gpu:`), "
        "an attribute of one (`if args.gpu:` in `get_network(args)`), or an attribute that only ever stores one (`self.use_gpu = use_gpu`). A variable's name is not "
        "evidence (`use_gpu = True` guards "
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
        # a type test on the data: true only for a tensor already on a GPU
        "import torch\nif isinstance(out.data, torch.cuda.FloatTensor):\n    pad = pad.cuda()\n",
        'import torch\nif out.type() == "torch.cuda.HalfTensor":\n    pad = pad.cuda()\n',
        'import torch\nassert torch.cuda.is_available()\nx = torch.zeros(3, device="cuda")\n',
        "import torch\ndef run():\n    if not torch.cuda.is_available():\n        return\n    model.cuda()\n",
        "import torch\nx = x.to(torch.float16)\n",
        # NCCL needs GPUs: after a set-up helper that starts it, the program only runs on a GPU machine
        'import torch\nimport torch.distributed as dist\ndef setup():\n    dist.init_process_group(backend="nccl")\n'
        "def main():\n    setup()\n    model.cuda()\n",
        # every call of the helper is guarded
        "import torch\ndef train(model):\n    model.cuda()\nif torch.cuda.is_available():\n    train(model)\n",
        "import torch\nclass Rigid:\n    def cuda(self):\n        return Rigid(self.rots.cuda(), self.trans.cuda())\n",
    ]
    INVALID = [
        Invalid('import torch\nx = torch.randn(4, 4, device="cuda")\n', line=2),
        Invalid('import torch\nbatch = batch.to("cuda:0")\n', line=2),
        Invalid("import torch\ndef train(model):\n    model.cuda()\n", line=3),
    ]

    def visit_Module(self, node: cst.Module) -> None:
        tests = self.ctx.calling_contexts.tests
        self.file_guarded = any(guarded_exit(s, tests) for s in node.body)

    def _guarded(self, node: cst.Call) -> bool:
        """A guard or a GPU-only set-up before it, here or at every call of its function (calling_context)."""
        if self.file_guarded:
            return True
        if any(fn.name.value in ("cuda", "to", "_apply") for fn in self.ctx.functions):
            return True  # implementing `.cuda()` for a container type: the caller chose CUDA
        return self.ctx.context_at(node).cuda

    def visit_Call(self, node: cst.Call) -> None:
        what = self._hard_coded(node)
        if what is not None and not self._guarded(node):
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
