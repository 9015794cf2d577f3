"""The installed rule catalogue, loaded once."""

from __future__ import annotations

from functools import cache

from torchlint.engine.rule import Rule


@cache
def rules() -> dict[str, type[Rule]]:
    from torchlint.rules import all_rules

    return all_rules()


def known_codes() -> list[str]:
    return ["TL000", *rules()]
