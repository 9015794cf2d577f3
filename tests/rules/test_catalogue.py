"""The catalogue: a package per code prefix, a module per rule named for it, every package installed, every
rule's docs one `torchlint rule CODE` away."""

from __future__ import annotations

import sys

import pytest

from torchlint.registry import rules

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

FAMILIES = {
    "1": "training",
    "2": "modules",
    "3": "devices",
    "4": "distributed",
    "5": "data",
    "6": "checkpoints",
    "7": "legacy",
    "8": "numerics",
}


@pytest.mark.parametrize("code", list(rules()))
def test_rule_lives_in_its_prefix_package_in_a_module_named_for_it(code):
    cls = rules()[code]
    assert cls.__module__ == f"torchlint.rules.{FAMILIES[code[2]]}.{cls.name.replace('-', '_')}"


def test_every_rule_module_holds_exactly_one_rule(pytestconfig):
    holders = [cls.__module__ for cls in rules().values()]
    modules = {
        f"torchlint.rules.{p.parent.name}.{p.stem}"
        for p in (pytestconfig.rootpath / "rules").glob("*/*.py")
        if not p.stem.startswith("_")
    }
    assert sorted(holders) == sorted(modules)


def test_every_package_is_installed(pytestconfig):
    """setuptools installs only the packages pyproject.toml lists: a missing one vanishes from wheels."""
    root = pytestconfig.rootpath
    listed = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"]
    on_disk = {
        ".".join(("torchlint", *p.parent.relative_to(root / "server" / "torchlint").parts))
        for p in (root / "server" / "torchlint").rglob("__init__.py")
    } | {
        ".".join(("torchlint.rules", *p.parent.relative_to(root / "rules").parts))
        for p in (root / "rules").rglob("__init__.py")
    }
    assert sorted(listed) == sorted(on_disk)


@pytest.mark.parametrize("code", list(rules()))
def test_rule_command_prints_the_docs(code, run_cli):
    out = run_cli("rule", code)
    assert out.returncode == 0, out.stderr
    cls = rules()[code]
    for text in (cls.name, cls.what.split(".")[0], cls.example.splitlines()[0]):
        assert text in out.stdout


def test_the_catalogue_survives_importing_the_modules_family_first():
    """`torchlint.rules.modules` is the TL2xx package: importing it must not shadow the catalogue's loader."""
    import importlib

    import torchlint.rules
    from torchlint import registry

    importlib.import_module("torchlint.rules.modules")
    registry.rules.cache_clear()
    assert "TL201" in registry.rules() and callable(torchlint.rules.rule_modules)
