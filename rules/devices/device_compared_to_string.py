"""TL308 device-compared-to-string: a torch.device compared with a string is never equal"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.callargs import string_value
from torchlint.engine.rule import SAFE, Invalid, Replace, Rule, fix
from torchlint.findings import Severity

from ._helpers import DEVICE_TYPES, proven_torch_device

_EQUALITY = (cst.Equal, cst.NotEqual, cst.In, cst.NotIn)


def _device_strings(expr: cst.BaseExpression) -> list[str] | None:
    """The device strings `expr` spells: `"cuda"`, or every element of `("cuda", "mps")` (None: not that)."""
    if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        texts = [string_value(e.value) if isinstance(e, cst.Element) else None for e in expr.elements]
        found = [t for t in texts if t is not None and t.split(":")[0] in DEVICE_TYPES]
        return found if found and len(found) == len(texts) else None
    text = string_value(expr)
    return [text] if text is not None and text.split(":")[0] in DEVICE_TYPES else None


class DeviceComparedToString(Rule):
    code = "TL308"
    analyses = frozenset({Analysis.CALL_SITES, Analysis.KINDS, Analysis.OWN_SUMMARY, Analysis.SCOPES, Analysis.VALUES})
    requires = ("device",)
    name = "device-compared-to-string"
    message = (
        "`{device}` is a `torch.device`, and a device never equals a string: `{test}` is always {value}; "
        "compare `{device}.type` (or `str({device})`)"
    )
    severity = Severity.WARNING
    category = "correctness"
    summary = 'A torch.device compared with a string (`device == "cuda"`): always False'
    what = (
        'Flags `device == "cuda"`, `device != "cpu"` and `device in ("cuda", "mps")` where `device` '
        "holds a `torch.device` — built by `torch.device(...)` at the assignment that reaches the comparison, "
        "or a tensor's `.device`. A name that may hold a string (a parameter, `args.device`, a value "
        "assigned under a branch) is left alone."
    )
    why = (
        '`torch.device` does not compare equal to a string: `torch.device("cuda") == "cuda"` is `False` '
        'and `!= "cpu"` is `True` on every machine. The branch it guards — `pin_memory`, extra data-loader '
        "workers, mixed precision, `cudnn.benchmark` — never runs (or always runs), silently."
    )
    example = """\
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
use_amp = device == "cuda"
"""
    fix_example = """\
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
use_amp = device.type == "cuda"
"""
    fix_safety = (
        "Safe: `.type` is the device's type as a string, which is what the comparison meant; offered only "
        'when every string is a bare type (`"cuda"`, not `"cuda:0"`).'
    )
    VALID = [
        # the type is compared
        'import torch\ndevice = torch.device("cuda")\nif device.type == "cuda":\n    pass\n',
        # the string form is compared
        'import torch\ndevice = torch.device("cuda")\nuse_amp = str(device) == "cuda"\n',
        # a string, not a device
        'import torch\ndevice = "cuda" if torch.cuda.is_available() else "cpu"\nuse_amp = device == "cuda"\n',
        # compared while still a string, turned into a device afterwards
        'import torch\ndevice = "cuda"\npin = device == "cuda"\ndevice = torch.device(device)\n',
        # unknown: a parameter
        'def setup(device):\n    return device == "cuda"\n',
        # a device compared with a device
        'import torch\ndevice = torch.device("cuda")\nsame = device == torch.device("cuda")\n',
    ]
    INVALID = [
        Invalid(
            'import torch\ndevice = torch.device("cuda")\nif device != "cpu":\n    torch.backends.cudnn.benchmark = True\n',
            line=3,
            fixed='import torch\ndevice = torch.device("cuda")\nif device.type != "cpu":\n    torch.backends.cudnn.benchmark = True\n',
        ),
        Invalid(
            "import torch\nx = torch.zeros(3)\nif x.device in ('cuda', 'mps'):\n    pass\n",
            line=3,
            fixed="import torch\nx = torch.zeros(3)\nif x.device.type in ('cuda', 'mps'):\n    pass\n",
        ),
        # an index in the string: no fix (`.type` would drop it)
        Invalid('import torch\ndevice = torch.device("cuda", 0)\nok = "cuda:0" == device\n', line=3),
    ]

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if len(node.comparisons) != 1:
            return
        target = node.comparisons[0]
        operator = target.operator
        if not isinstance(operator, _EQUALITY):
            return
        left, right = node.left, target.comparator
        strings = _device_strings(right)
        device = left
        if strings is None and isinstance(operator, (cst.Equal, cst.NotEqual)):
            strings, device = _device_strings(left), right
        if strings is None or not proven_torch_device(self.ctx, device):
            return
        code = self.ctx.module.code_for_node
        value = "True" if isinstance(operator, (cst.NotEqual, cst.NotIn)) else "False"
        message = self.message.format(device=code(device), test=code(node), value=value)
        edit = None
        if all(":" not in s for s in strings):
            typed = cst.Attribute(value=device, attr=cst.Name("type"))
            edit = fix("Compare the device's `.type`", Replace(device, typed), applicability=SAFE)
        self.report(node, message, fix=edit)
