"""Rule documentation, generated from the rule classes (never hand-edited).

`python -m torchlint.docs` rewrites docs/rules/*.md and the rule table in
README.md; a test fails when either is out of date.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from torchlint.engine.rule import Rule
from torchlint.registry import rules

TABLE_START = "<!-- rules:start -->"
TABLE_END = "<!-- rules:end -->"


def rule_markdown(cls: type[Rule]) -> str:
    parts = [
        f"# {cls.code} {cls.name}\n",
        f"Category: **{cls.category}** ({_selection(cls)}) · Default severity: **{cls.severity.value}** · "
        f"Fix: **{'yes' if cls.fixable() else 'no'}**\n",
        f"## What it does\n\n{cls.what}\n",
        f"## Why is this bad?\n\n{cls.why}\n",
        *([f"## Why opt-in\n\n{cls.opt_in}\n"] if cls.opt_in else []),
        f"## Example\n\n```python\n{cls.example.rstrip()}\n```\n",
    ]
    if cls.fix_example:
        parts.append(f"Use instead:\n\n```python\n{cls.fix_example.rstrip()}\n```\n")
    if cls.fix_safety:
        parts.append(f"## Fix safety\n\n{cls.fix_safety}\n")
    parts.append(
        f"## Suppressing\n\n`# noqa: {cls.code}` on the reported line, or "
        f'`ignore = ["{cls.code}"]` under `[tool.torchlint]`.\n'
    )
    return "\n".join(parts)


def _selection(cls: type[Rule]) -> str:
    if cls.by_default():
        return "on by default"
    return f'opt-in: `extend-select = ["{cls.code}"]`'


def rule_table() -> str:
    rows = ["| Code | Name | Category | Severity | Fix | What it catches |", "|---|---|---|---|---|---|"]
    for code, cls in rules().items():
        category = cls.category if cls.by_default() else f"{cls.category} (opt-in)"
        rows.append(
            f"| [{code}](docs/rules/{code}.md) | {cls.name} | {category} | {cls.severity.value} | "
            f"{'yes' if cls.fixable() else ''} | {cls.summary} |"
        )
    return "\n".join(rows)


def expected_files(root: Path) -> dict[Path, str]:
    """Every generated file with the content it should have."""
    out = {root / "docs" / "rules" / f"{code}.md": rule_markdown(cls) for code, cls in rules().items()}
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    block = f"{TABLE_START}\n{rule_table()}\n{TABLE_END}"
    out[readme] = re.sub(re.escape(TABLE_START) + ".*?" + re.escape(TABLE_END), lambda _: block, text, flags=re.S)
    return out


def main(argv: list[str] | None = None) -> int:
    root = Path(argv[0] if argv else ".")
    for path, content in expected_files(root).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != content:
            path.write_text(content, encoding="utf-8")
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
