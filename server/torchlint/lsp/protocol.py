"""The one place that depends on pygls internals: its protocol, hardened, and
the request bookkeeping pygls has no public API for.

No message a client sends can take the server down or leave a request
unanswered: pygls drops a request whose params do not deserialize without
answering it (the client would wait forever), and raises on edits to documents
that were never opened; here the first gets an InvalidParams error response and
the second is logged and ignored. Each function below that reads a private pygls
attribute says why it has to.
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import MsgId
from pygls.protocol.language_server import lsp_method

log = logging.getLogger("torchlint.lsp")


class _Dropped:
    """A message that was answered (or logged) while being parsed."""

    jsonrpc = None


class Protocol(LanguageServerProtocol):
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

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Generator[Any, Any, None]:
        if not self._known(params.text_document.uri):
            log.warning("didChange for a document that is not open: %s", params.text_document.uri)
            return
        yield from super().lsp_text_document__did_change(params)

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def lsp_notebook_document__did_change(
        self, params: types.DidChangeNotebookDocumentParams
    ) -> Generator[Any, Any, None]:
        if self.workspace.get_notebook_document(notebook_uri=params.notebook_document.uri) is None:
            log.warning("didChange for a notebook that is not open: %s", params.notebook_document.uri)
            return
        cells = params.change.cells
        for text in (cells.text_content or []) if cells else []:
            if not self._known(text.document.uri):
                log.warning("didChange for a cell that is not open: %s", text.document.uri)
                return
        yield from super().lsp_notebook_document__did_change(params)


def request_pending(server: LanguageServer, request: MsgId) -> bool:
    """Whether the client still waits for the answer to `request`.

    On $/cancelRequest pygls answers the request and forgets it, but a coroutine
    command that is already running (executeCommand runs it as a task of its own)
    keeps going; pygls' private table of unanswered requests is the only record of
    the cancellation, so long commands poll it here.
    """
    return request in server.protocol._request_futures
