/** A Jupyter notebook in real VS Code: findings land on the right cell, and fixes edit that cell. */
import * as assert from 'node:assert';
import * as vscode from 'vscode';
import { codes, diagnosticsWith, diagnosticsWithout, quickFixes, workspaceUri } from './helpers';
import { apply } from './python.test';

suite('Notebooks', () => {
  test('torch.load in a cell gets TL601 on that cell, and the quick fix clears it', async () => {
    const notebook = await vscode.workspace.openNotebookDocument(workspaceUri('restore.ipynb'));
    await vscode.window.showNotebookDocument(notebook);
    assert.strictEqual(notebook.notebookType, 'jupyter-notebook');
    const cell = notebook.cellAt(2).document;
    const [diag] = (await diagnosticsWith(cell.uri, 'TL601')).filter((d) => codes([d])[0] === 'TL601');
    assert.strictEqual(diag.range.start.line, 0);
    assert.deepStrictEqual(codes(vscode.languages.getDiagnostics(notebook.cellAt(1).document.uri)), []);
    const fixes = await quickFixes(cell.uri, diag);
    const fix = fixes.find((a) => a.title.includes('weights_only'));
    assert.ok(fix, `a weights_only fix among: ${fixes.map((a) => a.title).join(' | ')}`);
    await apply(fix);
    await diagnosticsWithout(cell.uri, 'TL601');
    assert.match(cell.getText(), /weights_only=True/);
    await notebook.save();
  });
});
