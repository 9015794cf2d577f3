"""The rule catalogue's one entry point, loaded once."""

from __future__ import annotations

from functools import cache

import torchlint.rules
from torchlint.engine.rule import Rule


@cache
def rules() -> dict[str, type[Rule]]:
    """Every rule class by code, in code order: the classes with a `code` that the rule modules define."""
    found: dict[str, type[Rule]] = {}
    for module in torchlint.rules.rule_modules():
        for cls in vars(module).values():
            if (
                isinstance(cls, type)
                and issubclass(cls, Rule)
                and cls.__module__ == module.__name__
                and "code" in vars(cls)
            ):
                if cls.code in found:
                    raise TypeError(f"duplicate rule code {cls.code}: {found[cls.code].__name__} and {cls.__name__}")
                found[cls.code] = cls
    return dict(sorted(found.items()))


def known_codes() -> list[str]:
    return ["TL000", *rules()]
