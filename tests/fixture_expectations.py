"""The fixture programs (fixtures/) and the `# expect: TL101,TL105` annotations they carry."""

from __future__ import annotations

import re
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
EXPECT = re.compile(r"#\s*expect:\s*(TL\d{3}(?:\s*,\s*TL\d{3})*)")


def expected(path: Path) -> set[tuple[int, str]]:
    out = set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = EXPECT.search(line)
        if m:
            out.update((n, c.strip()) for c in m.group(1).split(","))
    return out


def fixture_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "probe" not in p.relative_to(root).parts)
