"""The VS Code extension's manifest (extension/package.json) and the server agree:
every setting the server reads is declared there with the same JSON type, every
declared setting is read by someone, and every command the extension offers is
served by the server or by the extension itself, and the other way round."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsp_session import session

from torchlint.lsp.handlers.commands import COMMANDS
from torchlint.lsp.settings import KEYS, ClientSettings

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = json.loads((ROOT / "extension" / "package.json").read_text(encoding="utf-8"))
PROPERTIES = PACKAGE["contributes"]["configuration"]["properties"]
CONTRIBUTED = {c["command"] for c in PACKAGE["contributes"]["commands"]}

# Settings the server reads that the extension derives from a differently named or typed one.
DERIVED = {
    "run": ("torchlint.lintOnChange", "boolean"),  # sent as "onType" (true) or "onSave" (false)
    # package.json's `torchlint.interpreter` is the command line that starts the server; the server's
    # `interpreter` (the Python that runs the probe) is the interpreter the extension found.
    "interpreter": ("torchlint.interpreter", "array"),
}
# Settings only the extension reads: how to start the server, and what to log.
CLIENT_ONLY = {
    "torchlint.interpreter",
    "torchlint.importStrategy",
    "torchlint.args",
    "torchlint.lintOnChange",
    "torchlint.trace.server",
}
# The extension's own commands, and the server command each one sends (None: none).
CLIENT_COMMANDS = {
    "torchlint.restart": None,
    "torchlint.showLogs": None,
    "torchlint.selectInterpreter": None,
    "torchlint.fixAll": "torchlint.applyAllFixes",
    "torchlint.showRuleDocumentation": "torchlint.showRuleDocs",
    "torchlint.runProbeOnFile": "torchlint.runProbe",
}
# A value of each key that differs from the server's default.
SAMPLES = {
    "enable": False,
    "select": ["TL1"],
    "ignore": ["TL601"],
    "severity": {"TL101": "info"},
    "run": "onSave",
    "showSyntaxErrors": False,
    "interpreter": "/usr/bin/python3",
    "probe.enabled": False,
    "probe.timeoutSeconds": 5,
    "probe.maxSteps": 3,
}


@pytest.mark.parametrize("key", sorted(KEYS))
def test_every_setting_the_server_reads_is_declared_with_its_type(key):
    if key in DERIVED:
        name, kind = DERIVED[key]
        assert PROPERTIES[name]["type"] == kind
        own = PROPERTIES.get(f"torchlint.{key}")
        assert own is None or own["type"] != KEYS[key], f"torchlint.{key} is declared as the server reads it now"
    else:
        assert PROPERTIES[f"torchlint.{key}"]["type"] == KEYS[key]


def test_every_declared_setting_is_read_by_the_server_or_the_extension():
    read = {f"torchlint.{k}" for k in KEYS if k not in DERIVED} | CLIENT_ONLY
    assert set(PROPERTIES) - read == set()
    assert CLIENT_ONLY <= set(PROPERTIES)


@pytest.mark.parametrize("key", sorted(KEYS))
def test_the_server_parses_every_key_it_lists(key):
    value: object = SAMPLES[key]
    for part in reversed(key.split(".")):
        value = {part: value}
    parsed, errors = ClientSettings.parse(value)
    assert errors == []
    assert parsed != ClientSettings()
    assert set(SAMPLES) == set(KEYS)


def test_every_key_is_documented_for_other_editors():
    table = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    assert [k for k in KEYS if f"| `{k}` |" not in table] == []


def test_commands_are_served_by_one_side_and_reachable_from_the_extension():
    server = set(COMMANDS)
    assert set(CLIENT_COMMANDS) <= CONTRIBUTED
    assert CONTRIBUTED - set(CLIENT_COMMANDS) <= server  # the language client registers these from the server
    assert not set(CLIENT_COMMANDS) & server  # the language client would refuse to register a clash
    sent = {c for c in CLIENT_COMMANDS.values() if c}
    assert sent <= server
    assert server <= CONTRIBUTED | sent


@pytest.mark.asyncio
async def test_the_server_advertises_the_commands_it_serves(project):
    async with session(project) as s:
        assert sorted(s.initialized.capabilities.execute_command_provider.commands) == sorted(COMMANDS)
