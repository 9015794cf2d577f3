"""flake8 plugin: `flake8 --select TL` runs the same rules as `torchlint check`.

flake8 hands us the file's lines; we lint their text with the engine and the
settings torchlint itself would use for that path.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from torchlint import __version__


class Flake8Plugin:
    name = "torchlint"
    version = __version__

    def __init__(self, tree: object, filename: str = "stdin", lines: list[str] | None = None) -> None:
        self.filename = filename
        self.lines = lines or []

    def run(self) -> Iterator[tuple[int, int, str, type[Flake8Plugin]]]:
        from torchlint.config import ConfigError, ConfigResolver, Settings
        from torchlint.engine import lint_text
        from torchlint.registry import known_codes, rules

        catalogue = rules()
        torch_version = None  # the project's
        try:
            resolved = ConfigResolver(known_codes()).resolve(Path(self.filename))
            codes: Iterable[str] = resolved.selection.codes
            torch_version = resolved.torch.spec
        except ConfigError:  # flake8 has no way to show it: lint with the default selection
            codes = Settings().selection(self.filename, catalogue).codes
        text = "".join(self.lines)
        for f in lint_text(self.filename, text, [catalogue[c] for c in codes], torch_version=torch_version).findings:
            if f.code == "TL000":  # flake8 reports syntax errors itself (E999)
                continue
            yield f.line, f.column - 1, f"{f.code} {f.message}", type(self)
