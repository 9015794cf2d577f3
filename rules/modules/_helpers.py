"""What more than one module rule needs."""

from __future__ import annotations

INIT_METHODS = frozenset({"__init__", "reset_parameters", "_reset_parameters", "build", "setup"})
