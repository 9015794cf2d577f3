"""What to lint a document with: `[tool.torchlint]` from its nearest config
file, then the editor's settings (`workspace/configuration`, section
`torchlint`, or `initializationOptions`) on top.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from torchlint.config import ConfigError, ConfigResolver, Overrides, check_code, normalize_codes
from torchlint.findings import Severity

RUN_MODES = ("onType", "onSave")


@dataclass
class ClientSettings:
    enable: bool = True
    select: list[str] | None = None  # replaces the configured selection
    ignore: list[str] = field(default_factory=list)  # added to the configured ignores
    severity: dict[str, Severity] = field(default_factory=dict)
    run: str = "onType"
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
    def parse(cls, value) -> tuple[ClientSettings, list[str]]:
        """Settings from the client's JSON, and a message for each value we ignored."""
        s, errors = cls(), []
        if value is None:
            return s, errors
        if not isinstance(value, dict):
            return s, [f"settings must be an object, not {type(value).__name__}"]
        from torchlint.registry import known_codes

        known = known_codes()

        def codes(key):
            raw = value.get(key)
            if raw is None:
                return None
            if not isinstance(raw, list) or not all(isinstance(c, str) for c in raw):
                errors.append(f"`torchlint.{key}` must be a list of rule codes")
                return None
            good = []
            for c in normalize_codes(raw):
                try:
                    check_code(c, known, f"`torchlint.{key}`")
                    good.append(c)
                except ConfigError as exc:
                    errors.append(str(exc))
            return good

        if isinstance(value.get("enable"), bool):
            s.enable = value["enable"]
        s.select = codes("select")
        s.ignore = codes("ignore") or []
        sev = value.get("severity") or {}
        if isinstance(sev, dict):
            for code, level in sev.items():
                try:
                    check_code(str(code), known, "`torchlint.severity`")
                    s.severity[str(code)] = Severity(level)
                except (ConfigError, ValueError):
                    errors.append(
                        f"`torchlint.severity`: {code!r}: {level!r} is not error, warning or info"
                        if str(code) in known
                        else f"`torchlint.severity`: unknown rule code {code!r}"
                    )
        else:
            errors.append("`torchlint.severity` must be an object of code: level")
        run = value.get("run")
        if run is not None:
            if run in RUN_MODES:
                s.run = run
            else:
                errors.append(f"`torchlint.run` must be one of {', '.join(RUN_MODES)}, not {run!r}")
        if isinstance(value.get("interpreter"), str) and value["interpreter"]:
            s.interpreter = value["interpreter"]
        probe = value.get("probe")
        if isinstance(probe, dict):
            if isinstance(probe.get("enabled"), bool):
                s.probe_enabled = probe["enabled"]
            seconds, steps = probe.get("timeoutSeconds"), probe.get("maxSteps")
            if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and seconds > 0:
                s.probe_seconds = float(seconds)
            if isinstance(steps, int) and not isinstance(steps, bool) and steps > 0:
                s.probe_steps = steps
        return s, errors


@dataclass(frozen=True)
class Selection:
    """The rules and severities for one file."""

    rules: tuple
    severity: dict
    config_error: str | None = None  # the config file is broken: nothing is linted
    source: str | None = None  # the config file the settings came from


def select(resolver: ConfigResolver, client: ClientSettings, path: str) -> Selection:
    from torchlint.registry import rules

    try:
        settings = resolver.for_path(Path(path))
    except ConfigError as exc:
        return Selection((), {}, str(exc))
    catalogue = rules()
    selection = settings.selection(path, catalogue, client.overrides)
    return Selection(tuple(catalogue[c] for c in selection.codes), selection.severity, None, settings.source)
