"""engine/semantic/api_changes.py against the installed torch: a deprecated entry still exists (else it is a removal), a
removed one is gone or raises, a removed module does not import. The table is data; this keeps it true."""

from __future__ import annotations

import importlib
import warnings

import pytest

from torchlint.engine.semantic.api_changes import DEPRECATED, GONE, REMOVED, REMOVED_MODULES

torch = pytest.importorskip("torch")


def _resolve(qualified: str) -> object:
    """The object `qualified` names, as the attribute a program reaches (torch.nn.utils.weight_norm is the
    function, though a submodule has that name too), importing a submodule only where no attribute is."""
    head, *rest = qualified.split(".")
    obj: object = importlib.import_module(head)
    for i, attr in enumerate(rest, start=1):
        if hasattr(obj, attr):
            obj = getattr(obj, attr)
        else:
            obj = importlib.import_module(".".join([head, *rest[:i]]))
    return obj


@pytest.mark.parametrize("name", sorted(n for n in DEPRECATED if not n.startswith(("functorch.", "torchvision."))))
def test_a_deprecated_api_still_exists(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert callable(_resolve(name))


@pytest.mark.parametrize("name", sorted(GONE))
def test_a_gone_api_is_gone(name):
    with pytest.raises((AttributeError, ImportError)):
        _resolve(name)


@pytest.mark.parametrize("name", sorted(REMOVED))
def test_a_removed_function_raises_when_called(name):
    fn = _resolve(name)
    assert callable(fn)
    with pytest.raises(RuntimeError, match="removed"):
        fn(torch.eye(2), torch.eye(2)) if name in {"torch.solve", "torch.lstsq"} else fn(torch.eye(2))


@pytest.mark.parametrize("name", sorted(REMOVED_MODULES))
def test_a_removed_module_does_not_import(name):
    with pytest.raises(ImportError):
        importlib.import_module(name)
