"""Paths the tests share (a uniquely named module: `conftest` names collide across test folders)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
