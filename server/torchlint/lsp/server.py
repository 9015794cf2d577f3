"""The composition root: a pygls server, one Session, and every handler registered on it."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcRequestCancelled
from pygls.lsp.server import LanguageServer

from torchlint import __version__
from torchlint.lsp.handlers import actions, commands, diagnostics, documents, hover, lifecycle
from torchlint.lsp.protocol import Protocol
from torchlint.lsp.session import Session

if TYPE_CHECKING:
    from pygls.server import ServerErrors

log = logging.getLogger("torchlint.lsp")

NOTEBOOKS = types.NotebookDocumentSyncOptions(
    notebook_selector=[
        types.NotebookDocumentFilterWithCells(cells=[types.NotebookCellLanguage(language="python")], notebook=kind)
        for kind in ("jupyter-notebook", "interactive")
    ],
    save=True,
)
# Every LSP method the server answers besides `initialize` and pull diagnostics
# (both registered in create()), with the options it advertises.
FEATURES: list[tuple[str, Callable[..., Any], Any]] = [
    (types.INITIALIZED, lifecycle.initialized, None),
    (types.WORKSPACE_DID_CHANGE_CONFIGURATION, lifecycle.did_change_configuration, None),
    (types.WORKSPACE_DID_CHANGE_WATCHED_FILES, lifecycle.did_change_watched_files, None),
    (types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, lifecycle.did_change_workspace_folders, None),
    (types.SHUTDOWN, lifecycle.shutdown, None),
    (types.TEXT_DOCUMENT_DID_OPEN, documents.did_open, None),
    (types.TEXT_DOCUMENT_DID_CHANGE, documents.did_change, None),
    (types.TEXT_DOCUMENT_DID_SAVE, documents.did_save, None),
    (types.TEXT_DOCUMENT_DID_CLOSE, documents.did_close, None),
    (types.NOTEBOOK_DOCUMENT_DID_OPEN, documents.notebook_did_open, None),
    (types.NOTEBOOK_DOCUMENT_DID_CHANGE, documents.notebook_did_change, None),
    (types.NOTEBOOK_DOCUMENT_DID_SAVE, documents.notebook_did_save, None),
    (types.NOTEBOOK_DOCUMENT_DID_CLOSE, documents.notebook_did_close, None),
    (types.TEXT_DOCUMENT_CODE_ACTION, actions.code_action, actions.OPTIONS),
    (types.CODE_ACTION_RESOLVE, actions.resolve, None),
    (types.TEXT_DOCUMENT_HOVER, hover.hover, None),
]


class TorchlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "torchlint",
            __version__,
            protocol_cls=Protocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=NOTEBOOKS,
        )

    def report_server_error(self, error: Exception, source: ServerErrors) -> None:
        """Log instead of popping up: the user cannot act on a protocol hiccup."""
        if isinstance(error, JsonRpcRequestCancelled):
            return  # the user asked for it
        if isinstance(error, JsonRpcInvalidParams):
            # A refusal (the probe without torch, an unsaved file): the client's log gets it below, once.
            log.debug("%s: %s", getattr(source, "__name__", source), error)
        else:
            log.error("%s: %s", getattr(source, "__name__", source), error)
        try:
            self.window_log_message(types.LogMessageParams(types.MessageType.Error, f"torchlint server: {error}"))
        except Exception:
            pass


def _bound(session: Session, handler: Callable[..., Any]) -> Callable[..., Any]:
    """`handler` with the session as its first argument. pygls passes a handler's params (a
    command's arguments) positionally; the signature stays `*args`, so pygls neither injects
    its server nor tries to convert the session from a command argument."""
    if inspect.iscoroutinefunction(handler):

        async def bound_async(*args: Any) -> Any:
            return await handler(session, *args)

        return bound_async

    def bound(*args: Any) -> Any:
        return handler(session, *args)

    return bound


def create() -> TorchlintServer:
    """A server with every feature registered (a fresh one per call, for tests)."""
    server = TorchlintServer()
    session = Session(server)

    def initialize(params: types.InitializeParams) -> None:
        lifecycle.initialize(session, params)
        if session.pull:  # advertised only to clients that pull: capabilities are built after this returns
            server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, diagnostics.OPTIONS)(
                _bound(session, diagnostics.document_diagnostic)
            )

    server.feature(types.INITIALIZE)(initialize)
    for method, handler, options in FEATURES:
        server.feature(method, options)(_bound(session, handler))
    for name, command in commands.COMMANDS.items():
        server.command(name)(_bound(session, command))
    return server
