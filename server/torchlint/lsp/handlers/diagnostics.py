"""Pull diagnostics (`textDocument/diagnostic`), for clients that ask instead of being told."""

from __future__ import annotations

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from torchlint.lsp.session import Session

OPTIONS = types.DiagnosticOptions(identifier="torchlint", inter_file_dependencies=False, workspace_diagnostics=False)
SERVER_CANCELLED = -32802  # LSP's ServerCancelled: the client may ask again


async def document_diagnostic(
    session: Session, params: types.DocumentDiagnosticParams
) -> types.RelatedFullDocumentDiagnosticReport:
    uri = params.text_document.uri
    key = session.owner(uri)
    if not session.is_open(key):
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    published = await session.current(key)
    if published is None:
        raise JsonRpcException(
            "the document changed while it was being linted", SERVER_CANCELLED, {"retriggerRequest": True}
        )
    return types.RelatedFullDocumentDiagnosticReport(
        items=session.with_probe(uri, published.diagnostics.get(uri, [])),
        result_id=f"{key}@{published.generation}",
    )
