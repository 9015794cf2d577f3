"""Output formats for `torchlint check`."""

from __future__ import annotations

from torchlint.reporters import github, json, sarif, text

FORMATS = {"text": text.render, "json": json.render, "sarif": sarif.render, "github": github.render}
