"""Import resolution: the engine's light replacement for libcst's scope analysis.

libcst's QualifiedNameProvider costs about six times the parse. We only need to
know which local names stand for which dotted import paths, so we read the
import statements (anywhere in the file, ignoring scope) and resolve
`Name`/`Attribute` chains against that table.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from torchlint.engine.core.walk import iter_statements, small_statements

# Different spellings of one object, folded onto the public name.
CANONICAL = {
    "torch.nn.parallel.distributed.DistributedDataParallel": "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.DistributedDataParallel": "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.data_parallel.DataParallel": "torch.nn.DataParallel",
    "torch.nn.parallel.DataParallel": "torch.nn.DataParallel",
    "torch.utils.data.dataloader.DataLoader": "torch.utils.data.DataLoader",
    "torch.utils.data.distributed.DistributedSampler": "torch.utils.data.DistributedSampler",
    "torch.nn.modules.module.Module": "torch.nn.Module",
    "torch.autograd.variable.Variable": "torch.autograd.Variable",
    "torch.cuda.amp.GradScaler": "torch.amp.GradScaler",
    "torch.cuda.amp.grad_scaler.GradScaler": "torch.amp.GradScaler",
    "torch.amp.grad_scaler.GradScaler": "torch.amp.GradScaler",
    "torch.utils.checkpoint.checkpoint": "torch.utils.checkpoint.checkpoint",
    "pytorch_lightning.LightningModule": "lightning.pytorch.LightningModule",
    "lightning.LightningModule": "lightning.pytorch.LightningModule",
}


def dotted(node: cst.CSTNode) -> str | None:
    """`a.b.c` as text, or None if the node is not a plain name chain (any node: rules ask it of a walk's)."""
    parts = []
    while type(node) is cst.Attribute:  # not isinstance: libcst's ABC check is slow on this hot path
        parts.append(node.attr.value)
        node = node.value
    if type(node) is not cst.Name:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def target_names(target: cst.BaseExpression) -> list[str]:
    """The names an assignment target binds (`a`, `a, (b, c)`, `[a, b]`), in order."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in target_names(el.value)]
    return []


def _module_name(node: cst.BaseExpression | None) -> str | None:
    return dotted(node) if node is not None else None


def relative_module(package: str | None, level: int, name: str | None) -> str | None:
    """`from ..a import b` inside `package` -> the absolute module `a` names (None if unknown)."""
    if package is None:
        return None
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    if name:
        base.append(name)
    return ".".join(base) or None


class Imports:
    """Local name -> qualified dotted name, for every import in the file.

    `package` is the dotted package the file belongs to (from the project index), so
    relative imports resolve to project names; without it they are left out.
    """

    def __init__(self, module: cst.Module, package: str | None = None) -> None:
        self.table: dict[str, str] = {}
        self.package = package
        # id(node) -> (node, its qualified name): a call's function is asked about by many rules. The node
        # is kept in the entry, so its id cannot be reused by another node while the entry lives.
        self._qualnames: dict[int, tuple[cst.BaseExpression, str | None]] = {}
        # local name -> the modules `from` imports bind it from, as spelt (None: `from . import x`): a name
        # bound by two is a version fallback, and `table` keeps the last only
        self.from_modules: dict[str, set[str | None]] = {}
        self._collect(module.body)
        for name in _defined_last(module.body):
            self.table.pop(name, None)

    def _collect(self, body: Sequence[cst.BaseStatement]) -> None:
        for stmt in iter_statements(body, into_functions=True):
            for small in small_statements(stmt):  # types compared: isinstance() is slow on libcst's ABCs
                if type(small) is cst.Import:
                    self._import(small)
                elif type(small) is cst.ImportFrom:
                    self._import_from(small)

    def _import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.table[alias.asname.name.value] = full
            else:
                head = full.split(".")[0]
                self.table[head] = head

    def _import_from(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        spelt = dotted(node.module) if node.module else None
        for alias in node.names:
            bound = alias.asname.name if alias.asname is not None else alias.name
            if isinstance(bound, cst.Name):
                self.from_modules.setdefault(bound.value, set()).add(spelt)
        base = _module_name(node.module)
        if node.relative:
            base = relative_module(self.package, len(node.relative), base)
        if base is None:
            return
        for alias in node.names:
            name = dotted(alias.name)
            if name is None:
                continue
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.table[local] = f"{base}.{name}"

    def qualname(self, node: cst.BaseExpression) -> str | None:
        """Qualified name of a name chain whose head was imported, else None."""
        known = self._qualnames.get(id(node))
        if known is not None:
            return known[1]
        name = self._resolve(node)
        self._qualnames[id(node)] = (node, name)
        return name

    def _resolve(self, node: cst.BaseExpression) -> str | None:
        text = dotted(node)
        if text is None:
            return None
        head, _, rest = text.partition(".")
        base = self.table.get(head)
        if base is None:
            return None
        full = f"{base}.{rest}" if rest else base
        return CANONICAL.get(full, full)

    def local_name(self, qualname: str) -> str | None:
        """The local name an import binds to `qualname` (`T` for `import torch as T`), if any: what a fix
        that writes a new call through that module spells."""
        return next((local for local, q in self.table.items() if q == qualname), None)

    def imports_module(self, prefix: str) -> bool:
        return any(q == prefix or q.startswith(prefix + ".") for q in self.table.values())


def _defined_last(body: Sequence[cst.BaseStatement]) -> set[str]:
    """Module-level names whose last binding in source order is the file's own `def` or `class` (a notebook's
    `def ToTensor():` after `from torchvision.transforms.v2 import ToTensor`): the program's own object, not the
    import's, for the code after it and for every function that runs later."""
    own: set[str] = set()
    for stmt in iter_statements(body):
        if type(stmt) is cst.FunctionDef or type(stmt) is cst.ClassDef:
            own.add(stmt.name.value)
        for small in small_statements(stmt):
            if type(small) is cst.Import or type(small) is cst.ImportFrom:
                own.difference_update(_bound_by(small))
    return own


def _bound_by(node: cst.Import | cst.ImportFrom) -> set[str]:
    """The local names an import statement binds."""
    if isinstance(node.names, cst.ImportStar):
        return set()
    bound = set()
    for alias in node.names:
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            bound.add(alias.asname.name.value)
        else:
            name = dotted(alias.name)
            if name is not None:
                bound.add(name.split(".")[0])
    return bound


def is_main_guard(test: cst.BaseExpression) -> bool:
    """`if __name__ == "__main__":`, either way round."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    (c,) = test.comparisons
    if not isinstance(c.operator, cst.Equal):
        return False
    sides = {_name_or_text(test.left), _name_or_text(c.comparator)}
    return sides == {"__name__", "'__main__'"}


def _name_or_text(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.SimpleString) and expr.evaluated_value == "__main__":
        return "'__main__'"
    return None
