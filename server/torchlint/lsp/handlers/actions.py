"""Code actions: each diagnostic's fixes and "disable for this line", and fix-all
(its edit computed when the client resolves it, if the client can).

Quick fixes offer every fix, one at a time, safe ones first, then unsafe, then display
ones; only a safe fix is preferred (an editor's auto-fix applies it unasked), and a fix
that is not safe says so in its title, an unsafe one with what it may change; fix-all
(and so fix-on-save) applies safe fixes only.

In a notebook, `source.fixAll.torchlint` fixes the cell it is asked for (from
`notebook.codeActionsOnSave`, VS Code asks once per cell on save and applies every answer),
`notebook.source.fixAll.torchlint` the whole notebook (asked once per notebook)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lsprotocol import types

from torchlint.lsp import documents, edits
from torchlint.lsp.diagnostics import text_mark
from torchlint.lsp.session import Session

FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.torchlint"
NOTEBOOK_FIX_ALL = f"notebook.{FIX_ALL}"
# What a quick fix's title adds for a fix that fix-all would not apply (an unsafe fix names its risk).
CAUTION = {"unsafe": " (unsafe: {risk})", "display": " (review: one of several choices)"}
UNSPECIFIED_RISK = "may change behaviour"
OPTIONS = types.CodeActionOptions(
    code_action_kinds=[
        types.CodeActionKind.QuickFix,
        types.CodeActionKind.SourceFixAll,
        FIX_ALL,
        f"notebook.{types.CodeActionKind.SourceFixAll.value}",
        NOTEBOOK_FIX_ALL,
    ],
    resolve_provider=True,
)


async def code_action(session: Session, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    key = session.owner(uri)
    if not session.is_open(key):
        return []
    only = params.context.only
    actions: list[types.CodeAction] = []
    if _wants(only, types.CodeActionKind.QuickFix):
        actions.extend(_quick_fixes(session, uri, key, params.context.diagnostics))
    in_cell = key != uri
    if _wants(only, FIX_ALL) and (only or _has_fixes(session, key, uri if in_cell else None)):
        actions.append(await _fix_all(session, key, FIX_ALL, uri if in_cell else None))
    if in_cell and only and _wants(only, NOTEBOOK_FIX_ALL):
        actions.append(await _fix_all(session, key, NOTEBOOK_FIX_ALL, None))
    return actions


async def _fix_all(session: Session, key: str, kind: str, cell: str | None) -> types.CodeAction:
    """A fix-all action for `key`, its edits limited to `cell` when one is given."""
    action = types.CodeAction(
        "torchlint: fix all safely fixable problems",
        kind=kind,
        data={"fixAll": key, "cell": cell, "generation": session.generation(key)},
    )
    return action if _lazy_edits(session) else await resolve(session, action)


async def resolve(session: Session, action: types.CodeAction) -> types.CodeAction:
    """Fill in a fix-all action's edit."""
    data = action.data if isinstance(action.data, dict) else {}
    key = data.get("fixAll")
    if not isinstance(key, str) or action.edit is not None:
        return action
    cell = data.get("cell")
    changes, applied = await session.fix_all(key, cell if isinstance(cell, str) else None)
    if applied and cell is None:  # the count is the whole notebook's
        action.title = f"torchlint: fix {applied} problem{'s' if applied != 1 else ''}"
    action.edit = edits.workspace_edit(changes, session.versions(changes))
    return action


def _wants(only: Sequence[str] | None, kind: str) -> bool:
    """Whether a code action request restricted to `only` kinds includes `kind`."""
    return not only or any(kind == k or kind.startswith(f"{k}.") for k in only)


def _lazy_edits(session: Session) -> bool:
    """The client resolves a code action's edit when it is chosen, so fix-all is computed only then."""
    caps = session.server.client_capabilities.text_document
    support = caps and caps.code_action and caps.code_action.resolve_support
    return bool(support and "edit" in support.properties)


def _has_fixes(session: Session, key: str, cell: str | None) -> bool:
    published = session.results.get(key)
    return published is not None and any(
        fix.get("applicability") == "safe"
        for uri, ds in published.diagnostics.items()
        if cell is None or uri == cell
        for d in ds
        if isinstance(d.data, dict)
        for fix in d.data.get("fixes") or ()
    )


def _fix_data(session: Session, uri: str, key: str, diag: types.Diagnostic) -> dict[str, Any] | None:
    """The fixes and noqa lines of one of our diagnostics, from its `data` or from our last lint."""
    generation = session.generation(key)
    if isinstance(diag.data, dict) and diag.data.get("generation") == generation:
        return diag.data
    if isinstance(diag.data, dict) and diag.data.get("key") == key:  # a later lint of the same text: still valid
        snap = session.snapshot(key)
        if snap is not None and diag.data.get("text") == text_mark(snap.text):
            return diag.data
    # a client that drops `data`, or an older diagnostic: use ours if it matches
    published = session.results.get(key)
    current = published.diagnostics.get(uri, []) if published and published.generation == generation else []
    same = [d.data for d in current if d.code == diag.code and d.range == diag.range]
    return same[0] if same and isinstance(same[0], dict) else None


def _quick_fixes(
    session: Session, uri: str, key: str, diagnostics: Sequence[types.Diagnostic]
) -> list[types.CodeAction]:
    actions = []
    for diag in diagnostics:
        if diag.source != "torchlint" or not isinstance(diag.code, str):
            continue
        data = _fix_data(session, uri, key, diag)
        if data is None:
            continue
        for i, fix in enumerate(data.get("fixes") or []):  # in menu order: safe, unsafe, display
            changes = edits.from_data(fix["edits"])
            caution = CAUTION.get(fix.get("applicability"), "").format(risk=fix.get("risk") or UNSPECIFIED_RISK)
            actions.append(
                types.CodeAction(
                    f"{fix['title']}{caution} ({diag.code})",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    is_preferred=i == 0 and fix.get("applicability") == "safe",
                    edit=edits.workspace_edit(changes, session.versions(changes)),
                )
            )
        text = documents.source(session.workspace, uri)
        if text is not None and diag.code != "TL000":
            edit = edits.noqa_edit(text, list(data.get("noqa") or []), diag.code, documents.encoding(session.workspace))
            if edit is not None:
                noqa_changes = {uri: [edit]}
                actions.append(
                    types.CodeAction(
                        f"Disable {diag.code} for this line",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[diag],
                        edit=edits.workspace_edit(noqa_changes, session.versions(noqa_changes)),
                    )
                )
    return actions
