"""The `[tool.torchlint]` table a test project writes to select rules that are opt-in by measured precision
(TL601, TL801, TL802 among them), as a user of such a project would: tests of the command line, the server,
the fixes and the formats use those rules as their subject without relying on the default selection."""

from __future__ import annotations


def extend_select(*codes: str) -> str:
    """`[tool.torchlint]` with `extend-select` naming `codes` (a pyproject.toml's text)."""
    return "[tool.torchlint]\nextend-select = [" + ", ".join(f'"{code}"' for code in codes) + "]\n"
