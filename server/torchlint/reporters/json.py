"""Machine output: a JSON array, one object per finding with a fixed schema."""

from __future__ import annotations

import json as _json

from torchlint.findings import Finding


def render(findings: list[Finding], **_) -> str:
    return _json.dumps([f.to_json() for f in findings], indent=2, ensure_ascii=False) + "\n"
