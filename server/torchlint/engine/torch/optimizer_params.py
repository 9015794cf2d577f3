"""Which models an optimizer updates: the receivers of the `.parameters()` calls it was built over.

`torch.optim.Adam(G.parameters())`, `SGD(itertools.chain(a.parameters(), b.parameters()))`,
`AdamW([{"params": net.parameters()}, ...])`: rules that must tell one network's update from
another's (a GAN's generator and discriminator: TL116) compare these names with the models a
step's graph runs through. The optimizer is followed to the call that built it (values.py); an
optimizer whose construction is out of sight updates no known model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from torchlint.engine.core.callargs import get_arg
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.semantic.names import dotted
from torchlint.engine.semantic.values import current_where

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext

_PARAMETER_METHODS = frozenset({"parameters", "named_parameters"})


def optimized_models(ctx: FileContext, optimizer: cst.BaseExpression) -> frozenset[str]:
    """The dotted names (`G`, `self.netD`) of the models whose parameters `optimizer` updates, as
    spelled where it was built; empty when its construction is not in sight."""
    found = ctx.values.builder(optimizer, current_where(ctx))
    params = get_arg(found[0], "params", 0) if found is not None else None
    if found is None or params is None:
        return frozenset()
    value, where = params.value, found[1]
    for _ in range(3):  # `chain = itertools.chain(g.parameters(), e.parameters()); Adam(chain)`
        named = ctx.values.value_of(value, where) if isinstance(value, (cst.Name, cst.Attribute)) else None
        if named is None:
            break
        value, where = named
    return frozenset(
        name
        for n in (value, *iter_nodes(value, into_functions=False))
        if isinstance(n, cst.Call)
        and isinstance(n.func, cst.Attribute)
        and n.func.attr.value in _PARAMETER_METHODS
        and (name := dotted(n.func.value)) is not None
    )
