"""Fixtures for the language-server tests (helpers live in lsp_session.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def project(tmp_path: Path) -> Path:
    # a project that targets torch 2.1: a bare torch.load (TL601) is a finding there
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\ndependencies = ['torch>=2.1']\n")
    return tmp_path
