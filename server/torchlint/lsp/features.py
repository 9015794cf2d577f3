"""The LSP methods the server answers, registered on a TorchlintServer."""

from __future__ import annotations

import asyncio
from urllib.parse import unquote

from lsprotocol import types

from torchlint.lsp import commands, edits
from torchlint.lsp.hover import noqa_hover
from torchlint.lsp.server import DEBOUNCE, FIX_ALL, TorchlintServer, cancelled, is_config


def register(ls: TorchlintServer) -> None:
    @ls.feature(types.INITIALIZE)
    def initialize(params: types.InitializeParams):
        caps = params.capabilities.text_document
        ls.pull = bool(caps and caps.diagnostic)
        if not ls.pull:  # advertise pull diagnostics only to clients that pull
            ls.protocol.fm.features.pop(types.TEXT_DOCUMENT_DIAGNOSTIC, None)
        options = params.initialization_options
        if isinstance(options, dict):  # {"settings": {...}}, {"torchlint": {...}} (Helix) or the settings themselves
            ls.apply_client_settings(options.get("settings") or options.get("torchlint") or options)

    @ls.feature(types.INITIALIZED)
    async def initialized(params: types.InitializedParams):
        ls.warm_up()
        ls.register_watchers()
        before = ls.client
        await ls.fetch_client_settings()
        if ls.client != before:
            ls.relint_all()

    @ls.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(params: types.DidChangeConfigurationParams):
        settings = params.settings
        if isinstance(settings, dict) and isinstance(settings.get("torchlint"), dict):
            ls.apply_client_settings(settings["torchlint"])
        else:
            await ls.fetch_client_settings()
        ls.relint_all()

    @ls.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(params: types.DidChangeWatchedFilesParams):
        if any(is_config(c.uri) for c in params.changes):
            ls.reload_config()

    # --- text documents -------------------------------------------------------

    @ls.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams):
        key = ls.owner(params.text_document.uri)
        ls.touch(key)
        if not ls.pull:
            ls.schedule(key, 0)

    @ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams):
        changed(ls.owner(params.text_document.uri))

    @ls.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams):
        saved(params.text_document.uri)

    @ls.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams):
        closed(unquote(params.text_document.uri), [unquote(params.text_document.uri)])

    def changed(key: str) -> None:
        ls.touch(key)
        ls.results.pop(key, None)
        if ls.lint_on_change() and not ls.pull:
            ls.schedule(key, DEBOUNCE)

    def saved(uri: str) -> None:
        if is_config(uri):
            ls.reload_config()
            return
        key = ls.owner(uri)
        if not ls.pull and ls.is_open(key) and key not in ls.results:
            ls.schedule(key, 0)

    def closed(key: str, uris: list[str]) -> None:
        task = ls.pending.pop(key, None)
        if task is not None:
            task.cancel()
        ls.generations.pop(key, None)
        published = ls.results.pop(key, None)
        ls.clear({*uris, *(published.diagnostics if published else ())})

    # --- notebooks ----------------------------------------------------------------

    @ls.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def nb_open(params: types.DidOpenNotebookDocumentParams):
        key = unquote(params.notebook_document.uri)
        ls.touch(key)
        if not ls.pull:
            ls.schedule(key, 0)

    @ls.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def nb_change(params: types.DidChangeNotebookDocumentParams):
        key = unquote(params.notebook_document.uri)
        closed_cells = []
        structure = params.change.cells.structure if params.change.cells else None
        if structure and structure.did_close:
            closed_cells = [unquote(c.uri) for c in structure.did_close]
        changed(key)
        ls.clear(closed_cells)

    @ls.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def nb_save(params: types.DidSaveNotebookDocumentParams):
        key = unquote(params.notebook_document.uri)
        if not ls.pull and key not in ls.results:
            ls.schedule(key, 0)

    @ls.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def nb_close(params: types.DidCloseNotebookDocumentParams):
        closed(unquote(params.notebook_document.uri), [unquote(c.uri) for c in params.cell_text_documents])

    # --- pull diagnostics -------------------------------------------------------------

    @ls.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(identifier="torchlint", inter_file_dependencies=False, workspace_diagnostics=False),
    )
    async def pull(params: types.DocumentDiagnosticParams):
        uri = unquote(params.text_document.uri)
        key = ls.owner(uri)
        if not ls.is_open(key):
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        generation = ls.generations.get(key) or ls.touch(key)
        published = ls.results.get(key)
        if published is None or published.generation != generation:
            task = ls.pending.get(key)
            if task is None or task.done() or ls.pending_generation.get(key) != generation:
                task = ls.schedule(key, 0)
            published = await asyncio.shield(task)  # one lint serves every cell's pull; a cancelled pull keeps it
        if published is None or ls.generations.get(key) != published.generation:
            raise cancelled("the document changed while it was being linted")
        return types.RelatedFullDocumentDiagnosticReport(
            items=[*published.diagnostics.get(uri, []), *ls.probe.get(uri, [])],
            result_id=f"{key}@{published.generation}",
        )

    # --- code actions -----------------------------------------------------------------

    @ls.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll, FIX_ALL],
            resolve_provider=True,
        ),
    )
    async def code_action(params: types.CodeActionParams):
        uri = unquote(params.text_document.uri)
        key = ls.owner(uri)
        if not ls.is_open(key):
            return []
        only = params.context.only
        actions: list[types.CodeAction] = []
        if _wants(only, types.CodeActionKind.QuickFix):
            actions.extend(quick_fixes(uri, key, params))
        if _wants(only, FIX_ALL) and (only or _has_fixes(key)):
            action = types.CodeAction(
                "torchlint: fix all auto-fixable problems",
                kind=FIX_ALL,
                data={"fixAll": key, "generation": ls.generations.get(key)},
            )
            if not _lazy_edits():
                action = await resolve(action)
            if action is not None:
                actions.append(action)
        return actions

    def _lazy_edits() -> bool:
        caps = ls.client_capabilities.text_document
        support = caps and caps.code_action and caps.code_action.resolve_support
        return bool(support and "edit" in support.properties)

    def _has_fixes(key: str) -> bool:
        published = ls.results.get(key)
        return bool(published) and any(
            isinstance(d.data, dict) and d.data.get("fixes") for ds in published.diagnostics.values() for d in ds
        )

    def quick_fixes(uri: str, key: str, params: types.CodeActionParams) -> list[types.CodeAction]:
        generation = ls.generations.get(key)
        published = ls.results.get(key)
        current = published.diagnostics.get(uri, []) if published and published.generation == generation else []
        actions = []
        for diag in params.context.diagnostics:
            if diag.source != "torchlint" or not isinstance(diag.code, str):
                continue
            data = diag.data if isinstance(diag.data, dict) and diag.data.get("generation") == generation else None
            if data is None:  # a client that drops `data`, or an older diagnostic: use ours if it matches
                same = [d for d in current if d.code == diag.code and d.range == diag.range]
                data = same[0].data if same else None
            if data is None:
                continue
            for i, fix in enumerate(data.get("fixes") or []):
                changes = edits.from_data(fix["edits"])
                actions.append(
                    types.CodeAction(
                        f"{fix['title']} ({diag.code})",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[diag],
                        is_preferred=bool(i == 0 and data.get("preferred")),
                        edit=edits.workspace_edit(changes, ls.versions(changes)),
                    )
                )
            doc = ls.workspace.text_documents.get(uri)
            if doc is not None and diag.code != "TL000":
                edit = edits.noqa_edit(
                    doc.source, list(data.get("noqa") or []), diag.code, ls.workspace.position_encoding
                )
                if edit is not None:
                    changes = {uri: [edit]}
                    actions.append(
                        types.CodeAction(
                            f"Disable {diag.code} for this line",
                            kind=types.CodeActionKind.QuickFix,
                            diagnostics=[diag],
                            edit=edits.workspace_edit(changes, ls.versions(changes)),
                        )
                    )
        return actions

    @ls.feature(types.CODE_ACTION_RESOLVE)
    async def resolve(action: types.CodeAction):
        data = action.data if isinstance(action.data, dict) else {}
        key = data.get("fixAll")
        if not isinstance(key, str) or action.edit is not None:
            return action
        changes, applied = await commands.fix_all_changes(ls, key)
        if applied:
            action.title = f"torchlint: fix {applied} problem{'s' if applied != 1 else ''}"
        action.edit = edits.workspace_edit(changes, ls.versions(changes))
        return action

    # --- hover ---------------------------------------------------------------------------

    @ls.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(params: types.HoverParams):
        doc = ls.workspace.text_documents.get(unquote(params.text_document.uri))
        if doc is None:
            return None
        return noqa_hover(doc.source, params.position, ls.workspace.position_encoding)

    # --- commands -------------------------------------------------------------------------

    commands.register(ls)

    @ls.feature(types.SHUTDOWN)
    def shutdown(*_):
        for task in ls.pending.values():
            task.cancel()
        ls.lint_pool.shutdown(wait=False, cancel_futures=True)


def _wants(only, kind: str) -> bool:
    """Whether a code action request restricted to `only` kinds includes `kind`."""
    return not only or any(kind == k or kind.startswith(f"{k}.") for k in only)
