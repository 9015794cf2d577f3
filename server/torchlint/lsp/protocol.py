"""The one place that depends on pygls internals: its protocol, hardened, and
the request bookkeeping pygls has no public API for.

No message a client sends can take the server down or leave a request
unanswered: pygls drops a request whose params do not deserialize without
answering it (the client would wait forever), and raises on edits to documents
that were never opened; here the first gets an InvalidParams error response and
the second is logged and ignored. Each function below that reads a private pygls
attribute says why it has to.

Text changes are applied here (lsp/sync.py), not by pygls' documents: pygls
splits lines where `str.splitlines` does (a form feed shifts every line after
it) and silently drops a change that lies past the end of the text. A change
that does not fit marks the document lost (see `lost`) until the client sends
its whole text again.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Generator, Sequence
from typing import Any
from urllib.parse import unquote

import attrs
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import MsgId
from pygls.protocol.language_server import lsp_method
from pygls.workspace import TextDocument

from torchlint.lsp import sync

log = logging.getLogger("torchlint.lsp")


class _RefusalsAtDebug(logging.Filter):
    """pygls logs every request a handler refuses (InvalidParams: "save the script first", "the probe
    needs torch") as an ERROR with a traceback. The refusal is the answer, and the server reports it
    to the client's log (server.report_server_error): here it is a debug line, so the user reads it once."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], JsonRpcInvalidParams):
            record.msg, record.args = f"{record.getMessage()}: {record.exc_info[1]}", ()
            record.exc_info, record.exc_text = None, None
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            return log.isEnabledFor(logging.DEBUG)
        return True


_REFUSALS = _RefusalsAtDebug()


class _Dropped:
    """A message that was answered (or logged) while being parsed."""

    jsonrpc = None


class Protocol(LanguageServerProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        logging.getLogger("pygls.protocol.json_rpc").addFilter(_REFUSALS)  # once: a filter is added once
        # Documents whose text is no longer the editor's; a reopened document is a new object.
        self.lost: weakref.WeakSet[TextDocument] = weakref.WeakSet()

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except Exception as exc:
            if isinstance(data, dict) and "id" in data and "method" in data:
                error = JsonRpcInvalidParams(f"invalid params for {data.get('method')!r}: {exc.__cause__ or exc}")
                # pygls has no public call to answer a request it could not parse.
                self._send_response(data["id"], error=error.to_response_error())
            else:
                log.warning("ignoring malformed message %r", data.get("method") if isinstance(data, dict) else data)
            return _Dropped()

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Dropped) or not hasattr(message, "jsonrpc"):
            return None
        return super().handle_message(message)  # type: ignore[no-any-return]

    def _known(self, uri: str) -> bool:
        return unquote(uri) in self.workspace.text_documents

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        """pygls' shutdown, minus its bug: cancelling futures while iterating the dict they leave.

        The unanswered requests live only in pygls' private table, and the flag that makes it
        refuse further requests is private too.
        """
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current and not future.done():
                future.cancel()
        self._shutdown = True
        return None

    def _apply(
        self, document: types.VersionedTextDocumentIdentifier, changes: Sequence[types.TextDocumentContentChangeEvent]
    ) -> None:
        """Apply one document's changes in order; one that does not fit marks the document lost."""
        doc = self.workspace.text_documents[unquote(document.uri)]
        if doc.version is not None and document.version is not None and document.version <= doc.version:
            log.debug("%s: version %s after %s: changes out of order", document.uri, document.version, doc.version)
        text = doc.source
        for change in changes:
            whole = not isinstance(change, types.TextDocumentContentChangePartial)
            if doc in self.lost and not whole:
                continue  # nothing to apply it to until the client sends the whole text
            try:
                text = sync.apply(text, change, str(self.workspace.position_encoding))
            except sync.OutOfSync as exc:
                log.debug("%s: cannot apply change %r: %s", document.uri, change, exc)
                self.lost.add(doc)
                continue
            if whole:
                self.lost.discard(doc)
        # pygls has no public way to replace a document's text and keep the document.
        doc._source = text
        doc.version = document.version

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Generator[Any, Any, None]:
        if not self._known(params.text_document.uri):
            log.warning("didChange for a document that is not open: %s", params.text_document.uri)
            return
        self._apply(params.text_document, params.content_changes)
        if (user_handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield user_handler, (params,), None

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def lsp_notebook_document__did_change(
        self, params: types.DidChangeNotebookDocumentParams
    ) -> Generator[Any, Any, None]:
        """pygls' update for the notebook's structure and metadata, with the cells' text applied here.

        A cell may be opened and edited in one change (a paste); a cell closed and opened
        again in one change (a move) stays open, where pygls would open it, then close it.
        """
        if self.workspace.get_notebook_document(notebook_uri=params.notebook_document.uri) is None:
            log.warning("didChange for a notebook that is not open: %s", params.notebook_document.uri)
            return
        cells = params.change.cells
        if cells is not None:
            structure = cells.structure
            opened = {unquote(c.uri) for c in (structure.did_open or [])} if structure else set()
            for text in cells.text_content or []:
                if not (self._known(text.document.uri) or unquote(text.document.uri) in opened):
                    log.warning("didChange for a cell that is not open: %s", text.document.uri)
                    return
            if structure is not None and structure.did_close and opened:
                kept = [c for c in structure.did_close if unquote(c.uri) not in opened]
                structure = attrs.evolve(structure, did_close=kept or None)
                params = attrs.evolve(
                    params, change=attrs.evolve(params.change, cells=attrs.evolve(cells, structure=structure))
                )
                cells = params.change.cells
            assert cells is not None
            self.workspace.update_notebook_document(
                attrs.evolve(params, change=attrs.evolve(params.change, cells=attrs.evolve(cells, text_content=None)))
            )
            for text in cells.text_content or []:
                self._apply(text.document, text.changes)
        else:
            self.workspace.update_notebook_document(params)
        if (user_handler := self.fm.features.get(types.NOTEBOOK_DOCUMENT_DID_CHANGE)) is not None:
            yield user_handler, (params,), None


def lost(server: LanguageServer, uri: str) -> bool:
    """Whether an edit to the open document `uri` did not fit the server's copy: its text is unknown."""
    doc = server.workspace.text_documents.get(unquote(uri))
    return doc is not None and isinstance(server.protocol, Protocol) and doc in server.protocol.lost


def request_pending(server: LanguageServer, request: MsgId) -> bool:
    """Whether the client still waits for the answer to `request`.

    On $/cancelRequest pygls answers the request and forgets it, but a coroutine
    command that is already running (executeCommand runs it as a task of its own)
    keeps going; pygls' private table of unanswered requests is the only record of
    the cancellation, so long commands poll it here.
    """
    return request in server.protocol._request_futures
