/**
 * Jupyter notebooks in real VS Code: findings land on the right cell and stay right while the
 * cells are typed into, pasted into, inserted and deleted (vscode-languageclient sends every cell
 * edit as a ranged change), fixes edit exactly their cell, and fix-on-save applies each fix once.
 */
import * as assert from 'node:assert';
import * as vscode from 'vscode';
import { codes, diagnosticsWith, diagnosticsWithout, quickFixes, screenshot, waitFor, workspaceUri } from './helpers';
import { apply } from './python.test';

const LOOP = [
  'model = torch.nn.Linear(4, 2)',
  'opt = torch.optim.SGD(model.parameters(), lr=0.1)',
  'for x, y in loader:',
  '    loss = torch.nn.functional.mse_loss(model(x), y)',
  '    loss.backward()',
  '    opt.step()',
].join('\n');

/** A notebook of code cells written into the workspace, opened in the notebook editor. */
async function notebookOf(name: string, cells: string[]): Promise<vscode.NotebookDocument> {
  const uri = workspaceUri(name);
  const json = {
    cells: cells.map((text) => ({
      cell_type: 'code',
      execution_count: null,
      metadata: {},
      outputs: [],
      source: text.split(/(?<=\n)/),
    })),
    metadata: { language_info: { name: 'python' } },
    nbformat: 4,
    nbformat_minor: 5,
  };
  await vscode.workspace.fs.writeFile(uri, Buffer.from(JSON.stringify(json, null, 1)));
  const notebook = await vscode.workspace.openNotebookDocument(uri);
  await vscode.window.showNotebookDocument(notebook);
  return notebook;
}

/**
 * The diagnostics of `uri` once the server has answered `edit`: one publish after it, then two quiet
 * seconds (a server that lost the cell's text publishes too: an empty list, or a TL000).
 */
async function afterEdit(uri: vscode.Uri, edit: () => Promise<unknown>): Promise<vscode.Diagnostic[]> {
  let last = 0;
  const sub = vscode.languages.onDidChangeDiagnostics((e) => {
    if (e.uris.some((u) => u.toString() === uri.toString())) last = Date.now();
  });
  try {
    const start = Date.now();
    await edit();
    await waitFor(`the server's answer to an edit of ${uri.toString()}`, () =>
      last > 0 ? Date.now() - last > 2000 : Date.now() - start > 5000,
    );
  } finally {
    sub.dispose();
  }
  return vscode.languages.getDiagnostics(uri);
}

/** Type `text` at `at`, one applied edit per character, as keystrokes arrive. */
async function type(uri: vscode.Uri, at: vscode.Position, text: string): Promise<void> {
  let pos = at;
  for (const ch of text) {
    const edit = new vscode.WorkspaceEdit();
    edit.insert(uri, pos, ch);
    assert.ok(await vscode.workspace.applyEdit(edit), `typed ${JSON.stringify(ch)}`);
    pos = ch === '\n' ? new vscode.Position(pos.line + 1, 0) : pos.translate(0, ch.length);
  }
}

async function edit(build: (e: vscode.WorkspaceEdit) => void): Promise<void> {
  const e = new vscode.WorkspaceEdit();
  build(e);
  assert.ok(await vscode.workspace.applyEdit(e), 'the edit applied');
}

function onLine(diags: vscode.Diagnostic[], code: string): number[] {
  return diags.filter((d) => codes([d])[0] === code).map((d) => d.range.start.line);
}

suite('Notebooks', () => {
  test('typing in a cell keeps its TL601, and the quick fix then edits exactly that cell', async () => {
    const notebook = await vscode.workspace.openNotebookDocument(workspaceUri('restore.ipynb'));
    await vscode.window.showNotebookDocument(notebook);
    assert.strictEqual(notebook.notebookType, 'jupyter-notebook');
    const cell = notebook.cellAt(2).document;
    const [diag] = (await diagnosticsWith(cell.uri, 'TL601')).filter((d) => codes([d])[0] === 'TL601');
    assert.strictEqual(diag.range.start.line, 0);
    assert.deepStrictEqual(codes(vscode.languages.getDiagnostics(notebook.cellAt(1).document.uri)), []);

    const typed = await afterEdit(cell.uri, () => type(cell.uri, cell.lineAt(0).range.end, '  # ok'));
    assert.deepStrictEqual(codes(typed), ['TL601'], 'the finding stays while the line is typed on');
    assert.deepStrictEqual(onLine(typed, 'TL601'), [0]);

    const [current] = typed.filter((d) => codes([d])[0] === 'TL601');
    const fixes = await quickFixes(cell.uri, current);
    // "Disable for this line" rewrites the whole line as the server has it
    const noqa = fixes.find((a) => a.title === 'Disable TL601 for this line');
    assert.ok(noqa?.edit, 'the noqa action');
    const [[, [line]]] = noqa.edit.entries();
    assert.strictEqual(line.newText, 'state = torch.load("model.pt")  # ok  # noqa: TL601');
    const fix = fixes.find((a) => a.title.includes('weights_only'));
    assert.ok(fix, `a weights_only fix among: ${fixes.map((a) => a.title).join(' | ')}`);
    await apply(fix);
    await diagnosticsWithout(cell.uri, 'TL601');
    assert.strictEqual(cell.getText(), 'state = torch.load("model.pt", weights_only=True)  # ok');
    assert.deepStrictEqual(codes(await afterEdit(cell.uri, async () => undefined)), [], 'no TL000 after the fix');
    await notebook.save();
  });

  test('a loop pasted under print("start") is flagged on its `for` line, and its fix lands in the loop', async () => {
    const notebook = await notebookOf('paste.ipynb', ['import torch\nloader = []']);
    await edit((e) =>
      e.set(notebook.uri, [
        vscode.NotebookEdit.insertCells(1, [
          new vscode.NotebookCellData(vscode.NotebookCellKind.Code, "print('start')", 'python'),
        ]),
      ]),
    );
    const cell = notebook.cellAt(1).document;
    await edit((e) => e.insert(cell.uri, cell.lineAt(0).range.end, `\n${LOOP}`));
    const pasted = await diagnosticsWith(cell.uri, 'TL101');
    assert.deepStrictEqual(onLine(pasted, 'TL101'), [3], 'on the `for` line, not on print("start")');

    const [diag] = pasted.filter((d) => codes([d])[0] === 'TL101');
    await screenshot('notebook-before-fix');
    const fix = (await quickFixes(cell.uri, diag)).find((a) => a.title.includes('zero_grad'));
    assert.ok(fix, 'a zero_grad fix');
    await apply(fix);
    await diagnosticsWithout(cell.uri, 'TL101');
    await screenshot('notebook-after-fix');
    assert.strictEqual(
      cell.getText(),
      `print('start')\n${LOOP.replace('for x, y in loader:\n', 'for x, y in loader:\n    opt.zero_grad()\n')}`,
    );
    assert.deepStrictEqual(codes(await afterEdit(cell.uri, async () => undefined)), [], 'no TL000 after the fix');

    // insert a cell above and delete it again: the loop cell's findings follow the text
    await edit((e) =>
      e.set(notebook.uri, [
        vscode.NotebookEdit.insertCells(1, [new vscode.NotebookCellData(vscode.NotebookCellKind.Code, 'opt = None', 'python')]),
      ]),
    );
    const moved = notebook.cellAt(2).document;
    assert.strictEqual(moved.uri.toString(), cell.uri.toString());
    await afterEdit(cell.uri, () =>
      edit((e) => e.set(notebook.uri, [vscode.NotebookEdit.deleteCells(new vscode.NotebookRange(1, 2))])),
    );
    assert.deepStrictEqual(codes(vscode.languages.getDiagnostics(cell.uri)), []);
    await edit((e) => e.delete(cell.uri, cell.lineAt(4).range));
    const again = await diagnosticsWith(cell.uri, 'TL101');
    assert.deepStrictEqual(onLine(again, 'TL101'), [3], 'zero_grad deleted again: TL101 is back on the `for` line');
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  });

  test('fix-on-save in a notebook applies each fix once', async () => {
    const cfg = vscode.workspace.getConfiguration('notebook');
    await cfg.update('codeActionsOnSave', { 'notebook.source.fixAll.torchlint': 'explicit' }, vscode.ConfigurationTarget.Workspace);
    try {
      const notebook = await notebookOf('save_fix.ipynb', [`import torch\nloader = []\n${LOOP}`, LOOP.replace(/\bopt\b/g, 'opt2')]);
      const [first, second] = [notebook.cellAt(0).document, notebook.cellAt(1).document];
      await diagnosticsWith(first.uri, 'TL101');
      await diagnosticsWith(second.uri, 'TL101');
      await type(second.uri, second.lineAt(0).range.end, '  # second');
      await vscode.commands.executeCommand('workbench.action.files.save');
      await waitFor('the notebook saved', () => !notebook.isDirty);
      await diagnosticsWithout(first.uri, 'TL101');
      await diagnosticsWithout(second.uri, 'TL101');
      assert.strictEqual(first.getText().split('opt.zero_grad()').length, 2, first.getText());
      assert.strictEqual(second.getText().split('opt2.zero_grad()').length, 2, second.getText());
    } finally {
      await cfg.update('codeActionsOnSave', undefined, vscode.ConfigurationTarget.Workspace);
    }
  });

  test('the per-cell form of notebook.codeActionsOnSave fixes every cell on save', async () => {
    // VS Code asks `source.fixAll.torchlint` cell after cell and applies each answer at once, so the
    // next cell's answer is computed while the notebook changes under it (it came back empty).
    const cfg = vscode.workspace.getConfiguration('notebook');
    await cfg.update('codeActionsOnSave', { 'source.fixAll.torchlint': 'explicit' }, vscode.ConfigurationTarget.Workspace);
    try {
      const notebook = await notebookOf('cell_save_fix.ipynb', [
        'import torch\nloader = []\ny = torch.log(1 + loader)',
        LOOP,
        LOOP.replace(/\bopt\b/g, 'opt2'),
      ]);
      const cells = [0, 1, 2].map((i) => notebook.cellAt(i).document);
      await diagnosticsWith(cells[0].uri, 'TL801');
      await diagnosticsWith(cells[1].uri, 'TL101');
      await diagnosticsWith(cells[2].uri, 'TL101');
      await type(cells[0].uri, cells[0].lineAt(0).range.end, '  # edited');
      await vscode.commands.executeCommand('workbench.action.files.save');
      await waitFor('the notebook saved', () => !notebook.isDirty);
      for (const cell of cells) {
        await waitFor(`no findings left in ${cell.getText().split('\n')[0]}`, () => vscode.languages.getDiagnostics(cell.uri).length === 0);
      }
      assert.match(cells[0].getText(), /torch\.log1p\(loader\)/);
      assert.strictEqual(cells[1].getText().split('opt.zero_grad()').length, 2, cells[1].getText());
      assert.strictEqual(cells[2].getText().split('opt2.zero_grad()').length, 2, cells[2].getText());
    } finally {
      await cfg.update('codeActionsOnSave', undefined, vscode.ConfigurationTarget.Workspace);
    }
  });

  test('a message that cites another line names it by cell and line, as Jupyter shows it', async () => {
    const notebook = await notebookOf('cites.ipynb', [
      'import torch.nn.functional as F\nprobs = F.softmax(logits, dim=1)',
      'y = 2',
      'x = 1\nloss = F.cross_entropy(probs, target)',
    ]);
    const [diag] = (await diagnosticsWith(notebook.cellAt(0).document.uri, 'TL803')).filter((d) => codes([d])[0] === 'TL803');
    assert.match(diag.message, /on cell 3, line 2\b/);
    assert.doesNotMatch(diag.message, /on line/);
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  });
});
