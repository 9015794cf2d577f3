"""pygls' protocol, hardened: no message a client sends can take the server down
or leave a request unanswered.

pygls drops a request whose params do not deserialize without answering it
(the client would wait forever), and raises on edits to documents that were
never opened; here the first gets an InvalidParams error response and the
second is logged and ignored.
"""

from __future__ import annotations

import logging

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

log = logging.getLogger("torchlint.lsp")


class _Dropped:
    """A message that was answered (or logged) while being parsed."""

    jsonrpc = None


class Protocol(LanguageServerProtocol):
    def structure_message(self, data):
        try:
            return super().structure_message(data)
        except Exception as exc:
            if isinstance(data, dict) and "id" in data and "method" in data:
                error = JsonRpcInvalidParams(f"invalid params for {data.get('method')!r}: {exc.__cause__ or exc}")
                self._send_response(data["id"], error=error.to_response_error())
            else:
                log.warning("ignoring malformed message %r", data.get("method") if isinstance(data, dict) else data)
            return _Dropped()

    def handle_message(self, message):
        if isinstance(message, _Dropped) or not hasattr(message, "jsonrpc"):
            return None
        return super().handle_message(message)

    def _known(self, uri: str) -> bool:
        from urllib.parse import unquote

        return unquote(uri) in self.workspace.text_documents

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args):
        """pygls' shutdown, minus its bug: cancelling futures while iterating the dict they leave."""
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current and not future.done():
                future.cancel()
        self._shutdown = True
        return None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        if not self._known(params.text_document.uri):
            log.warning("didChange for a document that is not open: %s", params.text_document.uri)
            return
        yield from super().lsp_text_document__did_change(params)

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def lsp_notebook_document__did_change(self, params: types.DidChangeNotebookDocumentParams):
        if self.workspace.get_notebook_document(notebook_uri=params.notebook_document.uri) is None:
            log.warning("didChange for a notebook that is not open: %s", params.notebook_document.uri)
            return
        cells = params.change.cells
        for text in (cells.text_content or []) if cells else []:
            if not self._known(text.document.uri):
                log.warning("didChange for a cell that is not open: %s", text.document.uri)
                return
        yield from super().lsp_notebook_document__did_change(params)
