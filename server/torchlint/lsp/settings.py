"""What to lint a document with: `[tool.torchlint]` from its nearest config
file, then the editor's settings (`workspace/configuration`, section
`torchlint`, or `initializationOptions`) on top.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from torchlint.config import ConfigError, ConfigResolver, Overrides, check_code, normalize_codes
from torchlint.findings import Severity

if TYPE_CHECKING:
    from torchlint.engine.rule import Rule

RUN_MODES = ("onType", "onSave")
# Every key the server reads from the client's `torchlint` settings, with its JSON type
# (dotted keys are nested objects: `probe.enabled` is {"probe": {"enabled": ...}}).
KEYS = {
    "enable": "boolean",
    "select": "array",
    "ignore": "array",
    "severity": "object",
    "run": "string",
    "showSyntaxErrors": "boolean",
    "interpreter": "string",
    "probe.enabled": "boolean",
    "probe.timeoutSeconds": "number",
    "probe.maxSteps": "integer",
}


def _read(value: Mapping[str, object], key: str) -> object:
    """The value of one of KEYS in the client's JSON (None if absent), so no key is read undeclared."""
    if key not in KEYS:
        raise KeyError(f"{key} is not in settings.KEYS")
    current: object = value
    for part in key.split("."):
        current = current.get(part) if isinstance(current, Mapping) else None
    return current


@dataclass
class ClientSettings:
    enable: bool = True
    select: list[str] | None = None  # replaces the configured selection
    ignore: list[str] = field(default_factory=list)  # added to the configured ignores
    severity: dict[str, Severity] = field(default_factory=dict)
    run: str = "onType"
    show_syntax_errors: bool = True  # False: TL000 is not shown in the editor (other findings still are)
    interpreter: str | None = None  # the Python that runs `torchlint probe`
    # The probe runs user code: a client that says `probe.enabled: false` (VS Code in an
    # untrusted workspace) gets it refused; one that says nothing asks per command.
    probe_enabled: bool | None = None
    probe_seconds: float | None = None
    probe_steps: int | None = None

    @property
    def overrides(self) -> Overrides:
        return Overrides(self.select, self.ignore, severity=self.severity)

    @classmethod
    def parse(cls, value: object) -> tuple[ClientSettings, list[str]]:
        """Settings from the client's JSON, and a message for each value we ignored."""
        s = cls()
        errors: list[str] = []
        if value is None:
            return s, errors
        if not isinstance(value, Mapping):
            return s, [f"settings must be an object, not {type(value).__name__}"]
        from torchlint.registry import known_codes

        known = known_codes()

        def codes(key: str) -> list[str] | None:
            raw = _read(value, key)
            if raw is None:
                return None
            if not isinstance(raw, list) or not all(isinstance(c, str) for c in raw):
                errors.append(f"`torchlint.{key}` must be a list of rule codes")
                return None
            good = []
            for code in normalize_codes(raw):
                try:
                    check_code(code, known, f"`torchlint.{key}`")
                    good.append(code)
                except ConfigError as exc:
                    errors.append(str(exc))
            return good

        enable = _read(value, "enable")
        if isinstance(enable, bool):
            s.enable = enable
        s.select = codes("select")
        s.ignore = codes("ignore") or []
        sev = _read(value, "severity") or {}
        if isinstance(sev, Mapping):
            for key, level in sev.items():
                code = str(key).strip().upper()  # a code or a prefix (`TL1`): the longest that matches wins
                try:
                    check_code(code, known, "`torchlint.severity`")
                    s.severity[code] = Severity(level)
                except ConfigError as exc:
                    errors.append(str(exc))
                except ValueError:
                    errors.append(f"`torchlint.severity`: {key!r}: {level!r} is not error, warning or info")
        else:
            errors.append("`torchlint.severity` must be an object of code: level")
        show = _read(value, "showSyntaxErrors")
        if isinstance(show, bool):
            s.show_syntax_errors = show
        run = _read(value, "run")
        if run is not None:
            if run in RUN_MODES:
                s.run = str(run)
            else:
                errors.append(f"`torchlint.run` must be one of {', '.join(RUN_MODES)}, not {run!r}")
        interpreter = _read(value, "interpreter")
        if isinstance(interpreter, str) and interpreter:
            s.interpreter = interpreter
        enabled, seconds, steps = (_read(value, k) for k in ("probe.enabled", "probe.timeoutSeconds", "probe.maxSteps"))
        if isinstance(enabled, bool):
            s.probe_enabled = enabled
        if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and seconds > 0:
            s.probe_seconds = float(seconds)
        if isinstance(steps, int) and not isinstance(steps, bool) and steps > 0:
            s.probe_steps = steps
        return s, errors


@dataclass(frozen=True)
class LintSetup:
    """What one document is linted with: its rules and severities, or why it is not linted."""

    rules: tuple[type[Rule], ...]
    severity: dict[str, Severity]
    config_error: str | None = None  # the config file is broken: nothing is linted
    source: str | None = None  # the config file the settings came from
    torch_version: str | None = None  # the target torch the settings resolve to, as `check` uses it


def setup(resolver: ConfigResolver, client: ClientSettings, path: str) -> LintSetup:
    from torchlint.registry import rules

    try:
        resolved = resolver.resolve(Path(path), client.overrides)
    except ConfigError as exc:
        return LintSetup((), {}, str(exc))
    catalogue = rules()
    selection = resolved.selection
    return LintSetup(
        tuple(catalogue[c] for c in selection.codes),
        selection.severity,
        None,
        resolved.settings.source,
        resolved.torch.spec,
    )
