"""The rule catalogue: one module per family; importing this package registers them all."""

from __future__ import annotations

import importlib
import pkgutil

from torchlint.engine.rule import Rule


def all_rules() -> dict[str, type[Rule]]:
    """Every rule class by code, in code order."""
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    return dict(sorted(Rule.registry.items()))
