"""The migration fixes' signature data (rules/legacy/_signatures.py) against the installed libraries:
a fix binds arguments by these names and positions, so a wrong entry is a wrong fix."""

from __future__ import annotations

import ast
import importlib
import inspect

import pytest

from torchlint.engine.core.call_binding import Param, signature
from torchlint.rules.legacy import _signatures as api_signatures

torch = pytest.importorskip("torch")


def _resolve(qualname: str):
    parts = qualname.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise LookupError(qualname)


def _from_inspect(obj) -> tuple[Param, ...] | None:
    target = obj.__init__ if inspect.isclass(obj) else obj
    if target is object.__init__:
        return None  # a C type that parses its arguments in __new__: see _binds_as_written
    if getattr(target, "__wrapped__", None) is None and obj is torch.lu:
        target = torch.functional._lu_impl  # boolean dispatch: `lu(*args, **kwargs)` over this
    try:
        sig = inspect.signature(target)
    except ValueError:
        return None  # a builtin: see _from_schemas
    out = []
    for p in sig.parameters.values():
        if p.name == "self":  # a class's or a method's (`torch.Tensor.backward`) own object
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            out.append(Param(("*" if p.kind is p.VAR_POSITIONAL else "**") + p.name, False, False, None))
            continue
        default = None if p.default is p.empty else _spelled(p.default)
        out.append(Param(p.name, p.kind is not p.KEYWORD_ONLY, p.kind is not p.POSITIONAL_ONLY, default))
    return tuple(out)


def _spelled(default: object) -> str:
    """A default as our data spells it: a function by its name (`noop_context_fn`), else its repr."""
    return default.__name__ if inspect.isfunction(default) else repr(default)


def _ours(text: str) -> tuple[Param, ...]:
    """Our entry in the form _from_inspect gives (variadics as named markers, in place)."""
    sig = signature(text)
    params = list(sig.params)
    if sig.var_positional:
        star = text.split("*", 1)[1].split(",", 1)[0].strip()
        at = sum(1 for p in params if p.positional)
        params.insert(at, Param("*" + star, False, False, None))
    if sig.var_keyword:
        params.append(Param("**" + text.rsplit("**", 1)[1].strip(), False, False, None))
    return tuple(params)


def _from_schemas(qualname: str) -> list[tuple[Param, ...]]:
    """Each overload of the aten operator behind a builtin, as Python spells it (`self` is `input`)."""
    name = qualname.removeprefix("torch.").replace(".", "_")
    out = []
    for schema in torch._C._jit_get_schemas_for_operator(f"aten::{name}"):
        params = []
        for a in schema.arguments:
            default = None if not a.has_default_value() else repr(a.default_value)
            params.append(Param("input" if a.name == "self" else a.name, not a.kwarg_only, True, default))
        out.append(tuple(params))
    return out


def _binds_as_written(obj, text: str) -> bool:
    """For a C type parsed by PyArg_ParseTupleAndKeywords (no signature to inspect): each parameter is
    taken by keyword after the ones before it are given by position, and is itself the next position
    (given both ways it is a TypeError); one more positional argument and an unknown keyword are refused.
    Each parameter is given its default (all are optional in the entries this checks)."""
    params = signature(text).params
    values = [ast.literal_eval(p.default or "None") for p in params]
    for i, p in enumerate(params):
        obj(*values[:i], **{p.name: values[i]})
        with pytest.raises(TypeError):
            obj(*values[: i + 1], **{p.name: values[i]})
    with pytest.raises(TypeError):
        obj(*values, None)
    with pytest.raises(TypeError):
        obj(not_a_parameter=None)
    return True


def _same_names_and_kinds(ours: tuple[Param, ...], theirs: tuple[Param, ...]) -> bool:
    return [(p.name, p.positional, p.keyword) for p in ours] == [(p.name, p.positional, p.keyword) for p in theirs]


@pytest.mark.parametrize("qualname", sorted(api_signatures.TORCH))
def test_torch_signature_matches_the_installed_torch(qualname):
    ours = _ours(api_signatures.TORCH[qualname])
    obj = _resolve(qualname)
    theirs = _from_inspect(obj)
    if theirs is not None:
        assert ours == theirs
        return
    if inspect.isclass(obj):
        assert _binds_as_written(obj, api_signatures.TORCH[qualname])
        return
    without_out = tuple(p for p in ours if p.name != "out")
    overloads = _from_schemas(qualname)
    assert overloads, f"{qualname}: no signature and no aten schema to check against"
    matching = [o for o in overloads if _same_names_and_kinds(without_out, o)]
    assert matching, f"{qualname}: {without_out} matches none of {overloads}"
    assert any([p.default for p in without_out] == [p.default for p in o] for o in matching)


@pytest.mark.parametrize("qualname", sorted(api_signatures.TORCHVISION))
def test_torchvision_signature_matches_the_installed_torchvision(qualname):
    try:
        importlib.import_module("torchvision")
    except ImportError:
        pytest.skip("torchvision is not installed: its entries are checked where it is")
    assert _ours(api_signatures.TORCHVISION[qualname]) == _from_inspect(_resolve(qualname))


def test_torchvision_classifiers_have_the_classifier_signature():
    """A builder of `torchvision.models` not listed in TORCHVISION is bound to CLASSIFIER."""
    try:
        models = importlib.import_module("torchvision.models")
    except ImportError:
        pytest.skip("torchvision is not installed: CLASSIFIER is checked where it is")
    ours = _ours(api_signatures.CLASSIFIER)
    builders = [
        name
        for name, obj in vars(models).items()
        if name[:1].islower() and inspect.isfunction(obj) and "weights" in inspect.signature(obj).parameters
    ]
    assert builders
    for name in builders:
        if f"torchvision.models.{name}" not in api_signatures.TORCHVISION:
            assert _from_inspect(getattr(models, name)) == ours, name
