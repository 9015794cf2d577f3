"""What more than one device rule needs."""

from __future__ import annotations

import libcst as cst


def target_names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in target_names(el.value)]
    return []
