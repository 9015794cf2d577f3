"""The torch version a project targets, as Ruff has a target Python version.

Rules whose verdict depends on the version (`torch.load` defaults to
`weights_only=True` from 2.6; an API deprecated in 2.x) ask for it. In order:
`torch-version` in `[tool.torchlint]`; the lowest version the project's declared
dependencies allow (pyproject, requirements*.txt, setup.cfg, setup.py,
environment.yml); the torch installed in the project's virtual environment or
torchlint's own (its metadata, never an import); else the newest release we know.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

NEWEST = (2, 13)
_TORCH_NAMES = ("torch", "pytorch")
# `torch>=2.1`, "torch==2.4.*", pytorch=2.3 (conda), inside any requirements-like text
_REQUIREMENT = re.compile(
    r"""(?<![\w.-])(?:torch|pytorch)\s*(?:\[[^\]]*\])?\s*(?:(?:[<>=!~]=?|===?)\s*[\w.*+!-]+\s*,?\s*)*"""
)


@dataclass(frozen=True)
class TorchVersion:
    major: int
    minor: int
    source: str  # where it came from, for `--show-settings`
    # the newest release series the project admits (`torch==1.7.1`, `<1.8`: 1.7); None: no ceiling declared.
    # A setting or an installed torch is exact.
    ceiling: tuple[int, int] | None = None

    @property
    def pair(self) -> tuple[int, int]:
        return self.major, self.minor

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    @property
    def spec(self) -> str:
        """The target as `resolve` reads it back (a job or an editor setup passes it on): `2.4` exact,
        `1.4..1.7` a range, `0.4..` no ceiling."""
        if self.ceiling == self.pair:
            return str(self)
        return f"{self}..{'.'.join(map(str, self.ceiling)) if self.ceiling else ''}"


def parse_version(text: str) -> tuple[int, int] | None:
    try:
        v = Version(text.strip())
    except InvalidVersion:
        return None
    return v.major, v.minor


def lowest_allowed(requirement: str) -> tuple[int, int] | None:
    """The lowest torch `requirement` admits (`torch>=2.1,<3` -> 2.1); None when it sets no floor."""
    bounds = _bounds(requirement)
    return bounds[0] if bounds is not None else None


def _bounds(requirement: str) -> tuple[tuple[int, int], tuple[int, int] | None] | None:
    """(floor, ceiling) of the torch release series `requirement` admits (`torch==1.7.1` -> 1.7, 1.7;
    `torch>=1.4,<1.8` -> 1.4, 1.7; `torch>=0.4` -> 0.4, None); None when it sets no floor."""
    from packaging.requirements import InvalidRequirement, Requirement  # not at import: start-up time

    text = requirement.strip().replace("pytorch", "torch", 1)
    if re.match(r"^torch\s*=\s*\d", text):  # conda's single `=`
        text = text.replace("=", "==", 1)
    try:
        req = Requirement(text)
    except InvalidRequirement:
        return None
    if req.name.lower() != "torch":
        return None
    floors, ceilings = [], []
    for spec in req.specifier:
        found = parse_version(spec.version.replace(".*", ""))
        if found is None:
            continue
        if spec.operator in (">=", "==", "~=", "===", ">"):
            floors.append(found)
        if spec.operator in ("==", "===", "<="):
            ceilings.append(found)
        elif spec.operator == "~=" and spec.version.count(".") >= 2:
            ceilings.append(found)  # ~=1.7.0: any 1.7.x
        elif spec.operator == "<":  # <1.8: the 1.7 series at most; <2.0: some 1.x; <1.8.1: 1.8
            exclusive = Version(spec.version).micro == 0
            ceilings.append(
                (found[0], found[1] - 1) if exclusive and found[1] else (found[0] - 1, 99) if exclusive else found
            )
    if not floors:
        return None
    return max(floors), min(ceilings) if ceilings else None


def _from_text(text: str, source: str) -> TorchVersion | None:
    best = None
    for m in _REQUIREMENT.finditer(text):
        found = _bounds(m.group(0).strip().rstrip(","))
        if found is not None and (best is None or found[0] > best[0]):
            best = found
    return TorchVersion(*best[0], source, best[1]) if best is not None else None


def _from_pyproject(path: Path) -> TorchVersion | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    project = data.get("project", {})
    deps = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        deps.extend(extra)
    poetry = data.get("tool", {}).get("poetry", {}).get("dependencies", {})
    if isinstance(poetry.get("torch"), str):
        deps.append("torch" + poetry["torch"].replace("^", ">="))
    bounds = [b for b in (_bounds(d) for d in deps if isinstance(d, str)) if b is not None]
    if not bounds:
        return None
    floor, ceiling = max(bounds, key=lambda b: b[0])
    return TorchVersion(*floor, f"{path.name} dependencies", ceiling)


def declared(root: Path) -> TorchVersion | None:
    """The floor the project's dependency files put on torch."""
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        found = _from_pyproject(pyproject)
        if found is not None:
            return found
    candidates = [*sorted(root.glob("requirements*.txt")), *sorted(root.glob("requirements/*.txt"))]
    candidates += [root / n for n in ("setup.cfg", "setup.py", "environment.yml", "environment.yaml")]
    for path in candidates:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        found = _from_text(text, path.name)
        if found is not None:
            return found
    return None


def _from_environment(root: Path) -> TorchVersion | None:
    """`TORCHLINT_TORCH_VERSION`: the target for projects that declare none (CI images, test suites)."""
    found = parse_version(os.environ.get("TORCHLINT_TORCH_VERSION", ""))
    return TorchVersion(*found, "TORCHLINT_TORCH_VERSION", found) if found is not None else None


def installed(root: Path) -> TorchVersion | None:
    """The torch in an environment at the project's root (any name: discovery.is_environment), else in
    torchlint's own (metadata only)."""
    from torchlint.discovery import is_environment  # not at import: discovery reads the configuration

    try:
        folders = sorted(p for p in root.iterdir() if p.is_dir() and is_environment(p))
    except OSError:
        folders = []
    for venv in folders:
        for dist in sorted(venv.glob("lib/python3*/site-packages/torch-*.dist-info")):
            found = parse_version(dist.name[len("torch-") : -len(".dist-info")])
            if found is not None:
                return TorchVersion(*found, f"installed in {venv.name}/", found)
    listed = _listed_torch()
    if listed is not None:
        found = parse_version(listed)
    else:
        from importlib import metadata  # not at import: ~25 ms of start-up for one question

        try:
            found = parse_version(metadata.version("torch"))
        except metadata.PackageNotFoundError:
            return None
    return TorchVersion(*found, "installed with torchlint", found) if found is not None else None


def _listed_torch() -> str | None:
    """The version of the torch distribution `importlib.metadata` finds first on sys.path, read from its
    `torch-<version>.dist-info` folder name when that is the plain case (the first path entry holding any
    torch metadata holds exactly that folder); None otherwise, and `importlib.metadata` answers."""
    for entry in sys.path:
        folder = entry or "."
        if not os.path.isdir(folder):
            if os.path.exists(folder):
                return None  # a zip on the path: importlib.metadata reads inside it
            continue
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        torch = [n for n in names if n.endswith((".dist-info", ".egg-info", ".egg")) and _dist_name(n) == "torch"]
        if not torch:
            continue
        if len(torch) == 1 and torch[0].endswith(".dist-info") and "-" in torch[0]:
            return torch[0][: -len(".dist-info")].partition("-")[2]
        return None
    return None


def _dist_name(folder: str) -> str:
    stem = folder.rsplit(".", 1)[0] if not folder.endswith(".egg") else folder[: -len(".egg")]
    return re.sub(r"[-_.]+", "_", stem.partition("-")[0]).lower()


def configured_in(root: Path) -> str | None:
    """`torch-version` from the project's own `[tool.torchlint]` (pyproject.toml or torchlint.toml)."""
    for name, table in (("pyproject.toml", ("tool", "torchlint")), ("torchlint.toml", ())):
        try:
            data = tomllib.loads((root / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for key in table:
            data = data.get(key, {})
        value = data.get("torch-version")
        if isinstance(value, str):
            return value
    return None


def resolve(root: Path | None, configured: str | None = None) -> TorchVersion:
    """The target: `configured`, else the project's setting, declared floor, installed torch, newest."""
    if configured is None and root is not None:
        configured = configured_in(root)
    if configured:
        floor, dots, ceiling = configured.partition("..")  # a `spec` passed on
        found, top = parse_version(floor), parse_version(ceiling) if ceiling else None
        if found is not None:
            return TorchVersion(*found, "torch-version setting", top if dots else found)
    if root is not None:
        for source in (declared, _from_environment, installed):
            found_version = source(root)
            if found_version is not None:
                return found_version
    return TorchVersion(*NEWEST, "newest known release")
