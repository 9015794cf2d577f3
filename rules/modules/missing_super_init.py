"""TL204 missing-super-init: nn.Module subclass __init__ without super().__init__()"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.walk import iter_nodes
from torchlint.engine.rule import SAFE, InsertBefore, Invalid, Rule, fix
from torchlint.engine.semantic.names import dotted
from torchlint.findings import Severity


class MissingSuperInit(Rule):
    code = "TL204"
    analyses = frozenset({Analysis.KINDS, Analysis.OWN_SUMMARY})
    requires = ("__init__",)
    name = "missing-super-init"
    message = (
        "`{cls}.__init__` never calls `super().__init__()`: the first `self.<attr> = ...` raises "
        "`AttributeError: cannot assign module before Module.__init__() call`"
    )
    severity = Severity.ERROR
    category = "correctness"
    summary = "nn.Module subclass __init__ without super().__init__()"
    what = "Flags the `__init__` of an `nn.Module` subclass that sets attributes but never calls the base `__init__`."
    why = (
        "`Module.__init__` creates the dictionaries that hold parameters, buffers and submodules. Without "
        "it, assigning a submodule or parameter raises, and even plain attributes leave the module "
        "half-built (`.to()`, `state_dict()` and hooks fail later)."
    )
    example = """\
from torch import nn

class Net(nn.Module):
    def __init__(self):
        self.fc = nn.Linear(4, 2)
"""
    fix_example = """\
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
"""
    fix_safety = "Safe: inserts `super().__init__()` as the first statement (after a docstring)."
    VALID = [
        """\
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc = nn.Linear(4, 2)
""",
        """\
from torch import nn
class Net(nn.Module):
    def __init__(self):
        nn.Module.__init__(self)
        self.fc = nn.Linear(4, 2)
""",
        """\
class Plain:
    def __init__(self):
        self.x = 1
""",
        """\
from torch import nn
class Net(nn.Module):
    def __init__(self, *args):
        self.__init_from(*args)
""",
    ]
    INVALID = [
        Invalid(
            '''\
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, n):
        """A net."""
        self.n = n
        self.fc = nn.Linear(n, 2)
''',
            line=3,
            fixed='''\
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, n):
        """A net."""
        super().__init__()
        self.n = n
        self.fc = nn.Linear(n, 2)
''',
        ),
    ]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node.name.value != "__init__" or not self.ctx.in_module_class:
            return
        if not isinstance(node.body, cst.IndentedBlock):
            return
        assigns = False
        for n in iter_nodes(node.body, into_functions=False):
            if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value.startswith("__init"):
                return  # super().__init__(), Base.__init__(self), self.__init_x()
            if isinstance(n, cst.AssignTarget) and (dotted(n.target) or "").startswith("self."):
                assigns = True
        if not assigns:
            return
        body = node.body.body
        first = body[0]
        anchor = body[1] if _is_docstring(first) and len(body) > 1 else first
        edit = fix("Insert `super().__init__()`", InsertBefore(anchor, "super().__init__()"), applicability=SAFE)
        cls = self.ctx.current_class
        assert cls is not None, "in_module_class: a method of a class"
        self.report(node.name, self.message.format(cls=cls.name.value), fix=edit)


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )
