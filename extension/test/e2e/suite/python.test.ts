/** A Python file in real VS Code: squiggles from the server, quick fixes that clear them. */
import * as assert from 'node:assert';
import * as vscode from 'vscode';
import { codes, diagnosticsWith, diagnosticsWithout, quickFixes, waitFor, workspaceUri } from './helpers';

async function open(name: string): Promise<vscode.TextDocument> {
  const doc = await vscode.workspace.openTextDocument(workspaceUri(name));
  await vscode.window.showTextDocument(doc);
  return doc;
}

/** Applies a code action the way the editor does: its edit, then its command. */
export async function apply(action: vscode.CodeAction): Promise<void> {
  if (action.edit) assert.ok(await vscode.workspace.applyEdit(action.edit), `edit of "${action.title}" applied`);
  if (action.command) await vscode.commands.executeCommand(action.command.command, ...(action.command.arguments ?? []));
}

suite('Python files', () => {
  test('a training loop without zero_grad gets TL101, and its quick fix clears it', async () => {
    const doc = await open('train.py');
    const [diag] = (await diagnosticsWith(doc.uri, 'TL101')).filter((d) => codes([d])[0] === 'TL101');
    assert.strictEqual(diag.source, 'torchlint');
    assert.strictEqual(diag.range.start.line, 7, 'on the `for` line');
    const fixes = await quickFixes(doc.uri, diag);
    const fix = fixes.find((a) => a.title.includes('zero_grad'));
    assert.ok(fix, `a zero_grad fix among: ${fixes.map((a) => a.title).join(' | ')}`);
    assert.ok(fixes.some((a) => a.title === 'Disable TL101 for this line'), 'a noqa action too');
    await apply(fix);
    await diagnosticsWithout(doc.uri, 'TL101');
    assert.match(doc.getText(), /opt\.zero_grad\(\)/);
    await doc.save();
  });

  test('"Disable for this line" writes a noqa comment that silences TL601', async () => {
    const doc = await open('checkpoint.py');
    const [diag] = (await diagnosticsWith(doc.uri, 'TL601')).filter((d) => codes([d])[0] === 'TL601');
    const noqa = (await quickFixes(doc.uri, diag)).find((a) => a.title === 'Disable TL601 for this line');
    assert.ok(noqa, 'the noqa action');
    await apply(noqa);
    await diagnosticsWithout(doc.uri, 'TL601');
    assert.match(doc.lineAt(diag.range.start.line).text, /# noqa: TL601/);
    await doc.save();
  });

  test('"torchlint: Fix All in File" applies every safe fix in the file and leaves the unsafe ones', async () => {
    const doc = await open('fix_all.py');
    await diagnosticsWith(doc.uri, 'TL601');
    assert.deepStrictEqual(codes(vscode.languages.getDiagnostics(doc.uri)), ['TL101', 'TL601']);
    const fixAll = await vscode.commands.executeCommand<vscode.CodeAction[]>(
      'vscode.executeCodeActionProvider',
      doc.uri,
      new vscode.Range(0, 0, doc.lineCount, 0),
      'source.fixAll.torchlint',
    );
    assert.ok(fixAll?.some((a) => a.kind?.value === 'source.fixAll.torchlint'), 'the source.fixAll.torchlint action');
    await vscode.commands.executeCommand('torchlint.fixAll');
    await waitFor('the safe fix applied', () => !codes(vscode.languages.getDiagnostics(doc.uri)).includes('TL101'));
    assert.match(doc.getText(), /zero_grad\(\)/);
    // TL601's fix (weights_only=True) is unsafe: a checkpoint of whole objects would stop loading
    assert.deepStrictEqual(codes(vscode.languages.getDiagnostics(doc.uri)), ['TL601']);
    assert.doesNotMatch(doc.getText(), /weights_only/);
    await doc.save();
  });

  test('a severity prefix applies to every rule it starts, and the longest match wins', async () => {
    const doc = await open('severity.py');
    await diagnosticsWith(doc.uri, 'TL601');
    const level = () => vscode.languages.getDiagnostics(doc.uri).find((d) => codes([d])[0] === 'TL601')?.severity;
    const cfg = vscode.workspace.getConfiguration('torchlint');
    try {
      await cfg.update('severity', { TL6: 'error' }, vscode.ConfigurationTarget.Workspace);
      await waitFor('TL601 as an error through "TL6"', () => level() === vscode.DiagnosticSeverity.Error);
      await cfg.update('severity', { TL6: 'error', TL60: 'error', TL601: 'info' }, vscode.ConfigurationTarget.Workspace);
      await waitFor('TL601 as info through its own code', () => level() === vscode.DiagnosticSeverity.Information);
      await cfg.update('severity', { TL6: 'info', TL60: 'error' }, vscode.ConfigurationTarget.Workspace);
      await waitFor('TL601 as an error through "TL60", not "TL6"', () => level() === vscode.DiagnosticSeverity.Error);
    } finally {
      await cfg.update('severity', undefined, vscode.ConfigurationTarget.Workspace);
    }
    await waitFor('TL601 back at its default', () => level() === vscode.DiagnosticSeverity.Warning);
  });

  test('a half-typed line shows TL000 at its position and keeps the findings of the other lines', async () => {
    const uri = workspaceUri('half_typed.py');
    await vscode.workspace.fs.writeFile(uri, Buffer.from('import torch\n\nstate = torch.load("a.pt")\n\n'));
    const doc = await open('half_typed.py');
    await diagnosticsWith(doc.uri, 'TL601');
    const edit = new vscode.WorkspaceEdit();
    edit.insert(doc.uri, new vscode.Position(4, 0), 'oops = foo(1,');
    assert.ok(await vscode.workspace.applyEdit(edit));
    const typed = await diagnosticsWith(doc.uri, 'TL000');
    assert.deepStrictEqual(codes(typed), ['TL000', 'TL601'], 'TL601 stays while the file does not parse');
    const syntax = typed.find((d) => codes([d])[0] === 'TL000');
    const kept = typed.find((d) => codes([d])[0] === 'TL601');
    assert.strictEqual(syntax?.range.start.line, 4, 'on the half-typed line');
    assert.ok((syntax?.message.length ?? 0) < 120 && !/token/i.test(syntax?.message ?? ''), syntax?.message);
    assert.strictEqual(kept?.range.start.line, 2);
    const undo = new vscode.WorkspaceEdit();
    undo.delete(doc.uri, new vscode.Range(4, 0, 4, 'oops = foo(1,'.length));
    assert.ok(await vscode.workspace.applyEdit(undo));
    const parsed = await diagnosticsWithout(doc.uri, 'TL000');
    assert.deepStrictEqual(codes(parsed), ['TL601']);
    await doc.save();
  });

  test('a changed severity setting reaches the running server', async () => {
    const doc = await open('severity.py');
    await diagnosticsWith(doc.uri, 'TL601');
    const cfg = vscode.workspace.getConfiguration('torchlint');
    try {
      await cfg.update('severity', { TL601: 'error' }, vscode.ConfigurationTarget.Workspace);
      await waitFor('TL601 as an error', () =>
        vscode.languages.getDiagnostics(doc.uri).some((d) => d.severity === vscode.DiagnosticSeverity.Error),
      );
      await cfg.update('severity', { TL601: 'off' }, vscode.ConfigurationTarget.Workspace);
      await diagnosticsWithout(doc.uri, 'TL601');
    } finally {
      await cfg.update('severity', undefined, vscode.ConfigurationTarget.Workspace);
    }
    await diagnosticsWith(doc.uri, 'TL601');
  });
});
