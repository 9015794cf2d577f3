"""The rule catalogue: a package per code prefix, a module per rule. Read it through `torchlint.registry.rules()`.

Importing this package loads no rule: the result cache hashes these files without paying for libcst.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from types import ModuleType


def rule_modules() -> Iterator[ModuleType]:
    """Import every module of every rule package, for `torchlint.registry` to collect the rules they define.

    Not named `modules`: importing the TL2xx package `torchlint.rules.modules` would rebind that name.
    """
    for family in pkgutil.iter_modules(__path__, f"{__name__}."):
        package = importlib.import_module(family.name)
        for info in pkgutil.iter_modules(package.__path__, f"{family.name}."):
            yield importlib.import_module(info.name)
