"""Server-initiated `$/progress` for long commands, and whether the user cancelled them."""

from __future__ import annotations

import uuid
from types import TracebackType

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from torchlint.lsp.protocol import request_pending


class WorkDone:
    """A progress bar when the client supports one (a no-op otherwise), used as `async with`."""

    def __init__(self, server: LanguageServer, title: str, cancellable: bool = True) -> None:
        self.server, self.title, self.cancellable = server, title, cancellable
        self.token: str | None = None
        self.request = server.protocol.msg_id  # the executeCommand request this work answers

    async def __aenter__(self) -> WorkDone:
        window = self.server.client_capabilities.window
        if window and window.work_done_progress:
            token = f"torchlint-{uuid.uuid4()}"
            try:
                await self.server.work_done_progress.create_async(token)
                self.token = token
                begin = types.WorkDoneProgressBegin(self.title, cancellable=self.cancellable, percentage=0)
                self.server.work_done_progress.begin(token, begin)
            except Exception:
                self.token = None
        return self

    def report(self, message: str, percentage: int | None = None) -> None:
        if self.token is not None:
            self.server.work_done_progress.report(
                self.token, types.WorkDoneProgressReport(message=message, percentage=percentage)
            )

    @property
    def cancelled(self) -> bool:
        """The user cancelled the progress, or the client sent $/cancelRequest."""
        fut = self.server.work_done_progress.tokens.get(self.token) if self.token else None
        if fut is not None and fut.cancelled():
            return True
        return self.request is not None and not request_pending(self.server, self.request)

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self.token is not None:
            end = types.WorkDoneProgressEnd(message="cancelled" if self.cancellable and self.cancelled else "done")
            self.server.work_done_progress.end(self.token, end)
            self.server.work_done_progress.tokens.pop(self.token, None)
