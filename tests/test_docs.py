"""Generated documentation (docs/rules/*.md, README rule table) is current."""

from __future__ import annotations

from torchlint.docs import expected_files
from torchlint.registry import rules


def test_generated_docs_are_current(pytestconfig):
    root = pytestconfig.rootpath
    stale = [
        str(path.relative_to(root))
        for path, content in expected_files(root).items()
        if not path.exists() or path.read_text(encoding="utf-8") != content
    ]
    assert not stale, f"run `python -m torchlint.docs` to regenerate: {stale}"


def test_every_rule_has_a_docs_page_and_no_orphans(pytestconfig):
    pages = {p.stem for p in (pytestconfig.rootpath / "docs" / "rules").glob("TL*.md")}
    assert pages == set(rules())
