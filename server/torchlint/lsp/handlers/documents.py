"""Open, change, save and close text documents and notebooks: each bumps the
document's generation and (re)schedules or clears its lint."""

from __future__ import annotations

from lsprotocol import types

from torchlint.lsp.session import Session, is_config


def did_open(session: Session, params: types.DidOpenTextDocumentParams) -> None:
    session.opened(session.owner(params.text_document.uri))


def did_change(session: Session, params: types.DidChangeTextDocumentParams) -> None:
    session.edited(session.owner(params.text_document.uri))


def did_save(session: Session, params: types.DidSaveTextDocumentParams) -> None:
    if is_config(params.text_document.uri):
        session.reload_config()
    else:
        session.saved(session.owner(params.text_document.uri))


def did_close(session: Session, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    session.closed(uri, [uri])


def notebook_did_open(session: Session, params: types.DidOpenNotebookDocumentParams) -> None:
    key = params.notebook_document.uri
    session.clear([key])  # what "Lint Workspace" put on the closed notebook's file: its cells show it now
    session.opened(key)


def notebook_did_change(session: Session, params: types.DidChangeNotebookDocumentParams) -> None:
    structure = params.change.cells.structure if params.change.cells else None
    closed_cells = [c.uri for c in structure.did_close] if structure and structure.did_close else []
    session.edited(params.notebook_document.uri)
    session.clear(closed_cells)


def notebook_did_save(session: Session, params: types.DidSaveNotebookDocumentParams) -> None:
    session.saved(params.notebook_document.uri)


def notebook_did_close(session: Session, params: types.DidCloseNotebookDocumentParams) -> None:
    session.closed(params.notebook_document.uri, [c.uri for c in params.cell_text_documents])
