"""Every name of a function's tree (or the module's), by identifier: "is `res` read anywhere after this?"

A rule asking whether a name it saw bound is used elsewhere would otherwise walk the function, or the whole
module, itself at every question. The walk is made once per function (or module) asked about and kept for the
lint. Names in nested functions and classes count (a closure reads its enclosing function's names).
"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.walk import iter_nodes


class NameNodes:
    """The `Name` nodes under a function or the module, by identifier (`within`)."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self._found: dict[cst.CSTNode, dict[str, list[cst.Name]]] = {}

    def within(self, fn: cst.FunctionDef | None) -> dict[str, list[cst.Name]]:
        """The names of `fn`'s tree (the module's for None), nested definitions included, each with its nodes
        in source order."""
        node = fn if fn is not None else self.module
        found = self._found.get(node)
        if found is None:
            found = self._found[node] = {}
            for n in iter_nodes(node):
                if type(n) is cst.Name:
                    found.setdefault(n.value, []).append(n)
        return found
