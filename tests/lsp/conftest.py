"""Fixtures for the language-server tests (helpers live in lsp_session.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from selecting import extend_select


@pytest.fixture
def project(tmp_path: Path) -> Path:
    # a project that targets torch 2.1 and selects the opt-in TL601 and TL801, which the tests use as findings
    # with fixes: a bare torch.load is a TL601 finding there
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname = 'demo'\ndependencies = ['torch>=2.1']\n\n" + extend_select("TL601", "TL801")
    )
    return tmp_path
