"""Configuration: `[tool.torchlint]` in pyproject.toml, or torchlint.toml.

Settings are resolved per directory (the nearest config file wins) unless
`--config` names one file for the whole run. Unknown keys and unknown rule
codes are errors that name the key and the file.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import sys
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from torchlint.engine.semantic.target_version import TorchVersion, parse_version
from torchlint.findings import Severity

KEYS = {
    "select",
    "ignore",
    "extend-select",
    "exclude",
    "extend-exclude",
    "per-file-ignores",
    "severity",
    "torch-version",
    "unsafe-fixes",
}
DEFAULT_EXCLUDE = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "node_modules",
    "build",
    "dist",
    "__pycache__",
    ".ipynb_checkpoints",  # Jupyter's autosaved copies: every finding would appear twice
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".torchlint_cache",
    "site-packages",
    ".eggs",
    "*.egg-info",
)


class ConfigError(Exception):
    pass


@dataclass(frozen=True)
class Overrides:
    """Choices made outside the config file (command line, editor settings), layered on top
    of it: `select` replaces the configured selection, the others add to it."""

    select: Sequence[str] | None = None
    ignore: Sequence[str] = ()
    extend_select: Sequence[str] = ()
    severity: Mapping[str, Severity] = field(default_factory=dict)


@dataclass(frozen=True)
class Selection:
    """The rule codes that run on one file, and the severities that replace a rule's own."""

    codes: tuple[str, ...]
    severity: dict[str, Severity]


@dataclass(frozen=True)
class Resolved:
    """Everything the configuration decides about one file's findings: its settings, the rules that
    run with their severities, and the torch it targets. `check`, `--show-settings`, the language
    server and the flake8 plugin all ask `ConfigResolver.resolve`, so they cannot disagree."""

    settings: Settings
    selection: Selection
    torch: TorchVersion


@dataclass
class Settings:
    # None: the default selection (Rule.by_default: a category in engine.rule.DEFAULT_CATEGORIES)
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    extend_exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    severity: dict[str, Severity] = field(default_factory=dict)
    torch_version: str | None = None  # the torch the project targets (engine/semantic/target_version.py)
    unsafe_fixes: bool = False  # `--fix` applies unsafe fixes too (see findings.Applicability)
    root: Path = field(default_factory=Path.cwd)  # paths in the config are relative to this
    source: str | None = None  # the file these settings came from

    def selection(self, path: Path | str, all_codes: Iterable[str], overrides: Overrides | None = None) -> Selection:
        """The rules that run on `path` and their severities: these settings, their per-file
        ignores, then `overrides` on top. The CLI, the language server and the flake8 plugin
        all select through here, so they cannot disagree. Without a `select`, the rules whose
        category is in engine.rule.DEFAULT_CATEGORIES run (unless opt-in for their precision:
        Rule.by_default); `extend-select` and codes add to them."""
        extra = overrides or Overrides()
        ignore = [*self.ignore, *extra.ignore]
        rel = self.relative(path)
        if rel is not None:
            for pattern, ignored in self.per_file_ignores.items():
                if _match(rel, pattern):
                    ignore.extend(ignored)
        chosen = extra.select or self.select
        # A `select` given on top (command line, editor) replaces the configured selection, extend-select too
        configured = () if extra.select else self.extend_select
        select = [*(chosen or ()), *configured, *extra.extend_select]
        # Nothing chose a selection: a rule runs when its category is a default one (ignores still apply).
        default = _default_codes() if chosen is None else frozenset()
        every = tuple(all_codes)
        codes = tuple(c for c in every if _enabled(c, select, ignore, c in default))
        return Selection(codes, {**_levels(self.severity, every), **_levels(extra.severity, every)})

    def relative(self, path: Path | str) -> str | None:
        """`path` relative to the config's root, where its patterns apply (None: on another drive)."""
        try:
            return os.path.relpath(os.path.abspath(path), os.path.abspath(self.root))
        except ValueError:
            return None

    def widened(self) -> Settings:
        """These settings with every rule the default selection leaves out selected too (for `--statistics`)."""
        return self if self.select is not None else replace(self, select=["ALL"])

    def excluded(self, rel_path: str) -> bool:
        return _excluder((*self.exclude, *self.extend_exclude))(rel_path)


def _default_codes() -> frozenset[str]:
    """The codes of the rules selected by default (loads the rule catalogue): a default category, and not
    opt-in for its measured precision."""
    from torchlint.registry import rules

    return frozenset(code for code, cls in rules().items() if cls.by_default())


def _specificity(code: str, patterns: Iterable[str], default: bool = False) -> int:
    """How specifically `patterns` name `code`: -1 not at all, 0 `ALL` (or the default selection), else prefix length."""
    best = 0 if default else -1
    for p in patterns:
        if p == "ALL":
            best = max(best, 0)
        elif code.startswith(p):
            best = max(best, len(p))
    return best


def _levels(severity: Mapping[str, Severity], codes: Sequence[str]) -> dict[str, Severity]:
    """`severity` (codes, prefixes such as `TL1`, or `ALL`) as a level per code: the longest key
    that names a code wins. A key no code starts with (`TL000`, the parse error) stays as it is."""
    out = {k: v for k, v in severity.items() if k != "ALL" and not any(c.startswith(k) for c in codes)}
    for code in codes:
        keys = [k for k in severity if k == "ALL" or code.startswith(k)]
        if keys:
            out[code] = severity[max(keys, key=lambda k: 0 if k == "ALL" else len(k))]
    return out


def _enabled(code: str, select: Iterable[str], ignore: Iterable[str], default: bool = False) -> bool:
    s, i = _specificity(code, select, default), _specificity(code, ignore)
    return s >= 0 and s > i


@functools.lru_cache(maxsize=64)
def _excluder(patterns: tuple[str, ...]) -> Callable[[str], bool]:
    """`any(_match(rel_path, p) for p in patterns)`, asked for every folder and file a walk meets: a bare name
    without wildcards (`.git`, `venv/`) matches exactly when it is one of the path's components (where names
    are compared as they are spelt), so those are one set lookup; the others go through `_match`."""
    plain = frozenset(p.rstrip("/") for p in patterns if os.path.normcase("Aa") == "Aa" and _plain_name(p.rstrip("/")))
    others = tuple(p for p in patterns if p.rstrip("/") not in plain)

    def excluded(rel_path: str) -> bool:
        if plain and not plain.isdisjoint(rel_path.replace(os.sep, "/").split("/")):
            return True
        return any(_match(rel_path, p) for p in others)

    return excluded


def _plain_name(pattern: str) -> bool:
    return bool(pattern) and "/" not in pattern and not any(c in pattern for c in "*?[")


def _match(rel_path: str, pattern: str) -> bool:
    rel_path = rel_path.replace(os.sep, "/")
    pattern = pattern.rstrip("/")
    if fnmatch.fnmatch(rel_path, pattern):
        return True
    parts = rel_path.split("/")
    if "/" not in pattern:  # a bare name matches any path component
        return any(fnmatch.fnmatch(p, pattern) for p in parts)
    return any(fnmatch.fnmatch("/".join(parts[:n]), pattern) for n in range(1, len(parts)))


def _codes(value: object, key: str, where: str, known: Collection[str]) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of rule codes")
    for v in value:
        check_code(v, known, f"{where}: `{key}`")
    return list(value)


def normalize_codes(values: Iterable[str]) -> list[str]:
    """Rule codes as people type them (` tl1`, `all`) in the form the config holds (`TL1`, `ALL`)."""
    return [v.strip().upper() for v in values if v.strip()]


def check_code(code: str, known: Collection[str], where: str) -> None:
    if code == "ALL" or any(k.startswith(code) for k in known) and code.startswith("TL"):
        return
    raise ConfigError(f"{where}: unknown rule code {code!r} (see `torchlint rules`)")


def parse_table(table: dict[str, Any], path: Path, known: Collection[str]) -> Settings:
    where = str(path)
    unknown = sorted(set(table) - KEYS)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key `{unknown[0]}` in torchlint settings (allowed: {', '.join(sorted(KEYS))})"
        )
    s = Settings(root=path.parent, source=where)
    if "select" in table:
        s.select = _codes(table["select"], "select", where, known)
    if "ignore" in table:
        s.ignore = _codes(table["ignore"], "ignore", where, known)
    if "extend-select" in table:
        s.extend_select = _codes(table["extend-select"], "extend-select", where, known)
    for key in ("exclude", "extend-exclude"):
        if key in table:
            value = table[key]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{where}: `{key}` must be a list of glob patterns")
            setattr(s, key.replace("-", "_"), list(value) if key == "extend-exclude" else [*DEFAULT_EXCLUDE, *value])
    if "per-file-ignores" in table:
        pfi = table["per-file-ignores"]
        if not isinstance(pfi, dict):
            raise ConfigError(f"{where}: `per-file-ignores` must be a table of glob = [codes]")
        s.per_file_ignores = {k: _codes(v, f"per-file-ignores.{k}", where, known) for k, v in pfi.items()}
    if "torch-version" in table:
        version = table["torch-version"]
        if not isinstance(version, str) or parse_version(version) is None:
            raise ConfigError(f'{where}: `torch-version` must be a version string such as "2.4", not {version!r}')
        s.torch_version = version
    if "unsafe-fixes" in table:
        if not isinstance(table["unsafe-fixes"], bool):
            raise ConfigError(f"{where}: `unsafe-fixes` must be true or false")
        s.unsafe_fixes = table["unsafe-fixes"]
    if "severity" in table:
        sev = table["severity"]
        if not isinstance(sev, dict):
            raise ConfigError(f'{where}: `severity` must be a table of code = "error|warning|info"')
        for code, level in sev.items():
            check_code(code, known, f"{where}: `severity`")
            try:
                s.severity[code] = Severity(level)
            except ValueError:
                raise ConfigError(
                    f"{where}: severity for {code} must be error, warning or info, not {level!r}"
                ) from None
    return s


def load_file(path: Path, known: Collection[str]) -> Settings | None:
    """Settings from one file; None when a pyproject.toml has no [tool.torchlint]."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    if path.name == "pyproject.toml":
        table = data.get("tool", {}).get("torchlint")
        if table is None:
            return None
    else:
        table = data
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.torchlint] must be a table")
    return parse_table(table, path, known)


class ConfigResolver:
    """Finds the settings that apply to each file (nearest config wins)."""

    def __init__(
        self, known: Iterable[str], explicit: Path | None = None, widen: bool = False, lenient: bool = False
    ) -> None:
        self.known = list(known)
        self.widen = widen  # every path gets `Settings.widened()`
        # an invalid config file counts as none (the project index: the check of the file itself reports it)
        self.lenient = lenient
        self._cache: dict[Path, Settings] = {}
        self.explicit: Settings | None = None
        if explicit is not None:
            if not explicit.is_file():
                raise ConfigError(f"{explicit}: config file not found")
            self.explicit = load_file(explicit, self.known) or Settings(root=explicit.parent, source=str(explicit))

    def resolve(self, path: Path, overrides: Overrides | None = None) -> Resolved:
        """The settings of `path` with `overrides` on top, and its target torch: the settings'
        `torch-version`, else what the file's project declares or has installed."""
        from torchlint.engine.semantic.project import target_version  # not at import: it loads the engine
        from torchlint.registry import rules

        settings = self.for_path(path)
        selection = settings.selection(path, rules(), overrides)
        return Resolved(settings, selection, target_version(path, settings.torch_version))

    def for_path(self, path: Path) -> Settings:
        if self.explicit is not None:
            settings = self.explicit
        else:
            directory = path if path.is_dir() else path.parent
            settings = self._for_dir(directory.resolve())
        return settings.widened() if self.widen else settings

    def for_directory(self, resolved: Path) -> Settings:
        """`for_path(resolved / "_")` for a folder already resolved (a walk resolves every folder it meets)."""
        settings = self.explicit if self.explicit is not None else self._for_dir(resolved)
        return settings.widened() if self.widen else settings

    def _for_dir(self, directory: Path) -> Settings:
        cached = self._cache.get(directory)
        if cached is not None:
            return cached
        settings = None
        for name in ("torchlint.toml", "pyproject.toml"):
            candidate = directory / name
            if candidate.is_file():
                try:
                    settings = load_file(candidate, self.known)
                except ConfigError:
                    if not self.lenient:
                        raise
                    settings = Settings(root=directory, source=str(candidate))
                if settings is not None:
                    break
        if settings is None:
            parent = directory.parent
            settings = self._for_dir(parent) if parent != directory else Settings(root=Path.cwd())
        self._cache[directory] = settings
        return settings
