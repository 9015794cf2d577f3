"""The rule catalogue: one package per code prefix, one module per rule; importing this package registers them all."""

from __future__ import annotations

import importlib
import pkgutil

from torchlint.engine.rule import Rule


def all_rules() -> dict[str, type[Rule]]:
    """Every rule class by code, in code order."""
    for family in pkgutil.iter_modules(__path__, f"{__name__}."):
        package = importlib.import_module(family.name)
        for info in pkgutil.iter_modules(package.__path__, f"{family.name}."):
            importlib.import_module(info.name)
    return dict(sorted(Rule.registry.items()))
