"""TL712 autocast-without-device-type: torch.autocast(...) without its required device_type"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.callargs import get_arg, has_star, with_keyword
from torchlint.engine.rule import DISPLAY, SAFE, Invalid, Replace, Rule, fix
from torchlint.engine.semantic.values import Where
from torchlint.engine.torch.device_moves import device_type
from torchlint.findings import Severity

_DEVICE_GENERIC = frozenset({"torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast"})


class AutocastWithoutDeviceType(Rule):
    code = "TL712"
    analyses = frozenset({Analysis.DEVICE_MOVES, Analysis.SCOPES})
    requires = ("autocast",)
    name = "autocast-without-device-type"
    message = (
        "`{call}` without `device_type` raises TypeError (its first parameter is required); pass "
        '`device_type="cuda"` (or "cpu", ...)'
    )
    severity = Severity.ERROR
    category = "correctness"
    summary = "torch.autocast / torch.amp.autocast without device_type: TypeError on every call"
    what = (
        "Flags `torch.autocast(...)` and `torch.amp.autocast(...)` called with neither a positional argument "
        "nor `device_type=` (typically `torch.autocast(enabled=use_amp)` written after "
        "`torch.cuda.amp.autocast(enabled=use_amp)`, which needs none). A call with `*args` / `**kwargs` may "
        "pass it and is not flagged."
    )
    why = (
        "The device-generic autocast's first parameter, `device_type`, has no default: the call raises "
        "`TypeError: autocast.__init__() missing 1 required positional argument: 'device_type'` (checked on "
        "torch 2.13) every time the line runs, in the `with` that wraps the forward pass."
    )
    example = "import torch\n\nwith torch.autocast(enabled=True):\n    out = model(x)\n"
    fix_example = 'import torch\n\nwith torch.autocast(enabled=True, device_type="cuda"):\n    out = model(x)\n'
    fix_safety = (
        'Safe when every device the file moves models and tensors to is a literal CUDA device (`"cuda"`, '
        '`"cuda:0"`, `torch.device("cuda")`, `.cuda()`, or a name bound to one): `device_type="cuda"` is '
        "then the device the code runs on. Display-only otherwise (no move, or a device chosen at run time): "
        "which device the code means is not in the code."
    )
    VALID = [
        'import torch\nwith torch.autocast("cuda", enabled=use_amp):\n    y = model(x)\n',
        "import torch\nwith torch.autocast(device_type=device.type, dtype=torch.bfloat16):\n    y = model(x)\n",
        # the CUDA-specific autocast needs no device
        "import torch\nwith torch.cuda.amp.autocast(enabled=use_amp):\n    y = model(x)\n",
        "import torch\nwith torch.autocast(**amp_kwargs):\n    y = model(x)\n",
        "from contextlib import nullcontext as autocast\nwith autocast(enabled=True):\n    y = model(x)\n",
    ]
    INVALID = [
        Invalid(
            'import torch\nmodel = model.to("cuda")\nwith torch.autocast(enabled=use_amp):\n    y = model(x)\n',
            line=3,
            fixed='import torch\nmodel = model.to("cuda")\n'
            'with torch.autocast(enabled=use_amp, device_type="cuda"):\n    y = model(x)\n',
        ),
        Invalid(
            "from torch import amp\nwith amp.autocast(dtype=torch.float16):\n    y = model(x)\n",
            line=2,
            fixed='from torch import amp\nwith amp.autocast(dtype=torch.float16, device_type="cuda"):\n    y = model(x)\n',
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        q = self.ctx.qualname(node.func)
        if q not in _DEVICE_GENERIC or has_star(node) or get_arg(node, "device_type", 0) is not None:
            return
        new = with_keyword(node, "device_type", '"cuda"')
        applicability = SAFE if self._on_cuda() else DISPLAY
        edit = fix('Pass `device_type="cuda"`', Replace(node, new), applicability=applicability)
        call = self.ctx.module.code_for_node(node.func)
        self.report(node, self.message.format(call=f"{call}(...)"), fix=edit)

    def _on_cuda(self) -> bool:
        """Every move in the file goes to a literal CUDA device (and there is one)."""
        types = set()
        for move in self.ctx.device_moves.every():
            device = move.device
            if isinstance(device, cst.Name):
                found = self.ctx.values.value_of(device, Where(move.function))
                device = found[0] if found is not None else device
            types.add(device_type(device, self.ctx.imports) if not isinstance(device, cst.Name) else None)
        return types == {"cuda"}
