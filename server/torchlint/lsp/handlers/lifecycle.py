"""Starting, configuring and stopping: initialize, settings, config files, workspace folders, shutdown."""

from __future__ import annotations

from lsprotocol import types

from torchlint.lsp.session import SECTION, Session, is_config
from torchlint.lsp.uris import to_path


def initialize(session: Session, params: types.InitializeParams) -> None:
    caps = params.capabilities.text_document
    session.pull = bool(caps and caps.diagnostic)
    options = params.initialization_options
    if isinstance(options, dict):  # {"settings": {...}}, {"torchlint": {...}} (Helix) or the settings themselves
        session.apply_settings(options.get("settings") or options.get(SECTION) or options)


async def initialized(session: Session, params: types.InitializedParams) -> None:
    session.warm_up()
    session.index_workspace()
    session.watch_config_files()
    if await session.fetch_settings():
        session.relint_all()


async def did_change_configuration(session: Session, params: types.DidChangeConfigurationParams) -> None:
    pushed = params.settings.get(SECTION) if isinstance(params.settings, dict) else None
    if isinstance(pushed, dict):
        session.apply_settings(pushed)
    await session.fetch_settings()  # per folder; a client that cannot be asked keeps what it pushed
    session.relint_all()


async def did_change_workspace_folders(session: Session, params: types.DidChangeWorkspaceFoldersParams) -> None:
    if await session.fetch_settings():
        session.relint_all()


def did_change_watched_files(session: Session, params: types.DidChangeWatchedFilesParams) -> None:
    if any(is_config(c.uri) for c in params.changes):
        session.reload_config()
    session.files_changed(to_path(c.uri) for c in params.changes)


def shutdown(session: Session, params: None) -> None:
    session.shutdown()
