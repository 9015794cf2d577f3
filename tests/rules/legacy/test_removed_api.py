"""TL710 removed-api: removed modules and private entry points (the function stubs are in its examples)."""

from __future__ import annotations

from torchlint.engine import lint_text
from torchlint.registry import rules


def _lines(src: str, version: str | None = None) -> list[int]:
    return [f.line for f in lint_text("m.py", src, [rules()["TL710"]], torch_version=version).findings]


def test_tl710_removed_modules_by_every_import_form():
    src = (
        "import torch._six\n"
        "from torch._six import string_classes, inf\n"
        "from torch.distributed.pipeline.sync import Pipe\n"
        "from torch.onnx import _export\n"
        "import torch.utils.ffi as ffi\n"
        "import torch\n"
        "torch.set_deterministic(True)\n"
    )
    assert _lines(src) == [1, 2, 3, 4, 5, 7]


def test_tl710_only_for_targets_that_lack_them():
    assert _lines("from torch._six import inf\n", "1.13") == []
    assert _lines("from torch.distributed.pipeline.sync import Pipe\n", "2.3") == []
    assert _lines("from torch.distributed.pipeline.sync import Pipe\n", "2.5") == [1]


def test_tl710_guarded_imports_are_fallbacks():
    src = (
        "try:\n    from torch._six import inf\nexcept (ImportError, AttributeError):\n    from math import inf\n"
        "try:\n    import torch._six as six\nexcept:\n    six = None\n"
        "import sys\nif sys.version_info < (3,):\n    from torch._six import string_classes\n"
    )
    assert _lines(src) == []


def test_tl710_an_import_in_the_handler_or_an_unrelated_try_still_raises():
    src = (
        "try:\n    import apex\nexcept ImportError:\n    from torch._six import inf\n"
        "try:\n    from torch._six import inf\nexcept KeyError:\n    pass\n"
    )
    assert _lines(src) == [4, 6]


def test_tl710_look_alikes_are_silent():
    src = (
        "import torch.distributed.pipelining\nfrom torch.distributed import pipelining\nimport torch.onnx\nimport six\n"
    )
    assert _lines(src) == []
