/** The client around the server: activation, commands, restarts on setting changes. */
import * as assert from 'node:assert';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { codes, controller, diagnosticsWith, waitFor, workspaceUri } from './helpers';

suite('Client', () => {
  test('runs the server on the configured interpreter', async () => {
    const server = await controller();
    await waitFor('a running server', () => server.client?.isRunning());
    const configured = vscode.workspace.getConfiguration('torchlint').get<string[]>('interpreter');
    assert.ok(configured?.length, 'the tests configure torchlint.interpreter');
    assert.strictEqual(server.python?.executable, configured[0]);
  });

  test('"Lint Workspace" reports files that are not open', async () => {
    const uri = workspaceUri('scripts/evaluate.py');
    assert.ok(!vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString()));
    await vscode.commands.executeCommand('torchlint.lintWorkspace');
    await diagnosticsWith(uri, 'TL601');
  });

  test('"Show Rule Documentation" opens the rule of the finding under the cursor, read-only, and so does its code link', async () => {
    const uri = workspaceUri('severity.py');
    const editor = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    const [diag] = await diagnosticsWith(uri, 'TL601');
    editor.selection = new vscode.Selection(diag.range.start, diag.range.start);
    const doc = await vscode.commands.executeCommand<vscode.TextDocument>('torchlint.showRuleDocumentation');
    assert.ok(doc, 'a documentation document');
    assert.strictEqual(doc.uri.toString(), 'torchlint-docs:/TL601.md', 'a virtual document, served offline by the server');
    assert.strictEqual(doc.languageId, 'markdown');
    assert.ok(!doc.isDirty && !doc.isUntitled, 'nothing to save on close');
    assert.ok(!vscode.workspace.textDocuments.some((d) => d.isUntitled), 'no Untitled buffer');
    assert.match(doc.getText(), /^# TL601/);
    assert.match(doc.getText(), /weights_only/);

    // The code's link opens the same docs through the command, with the code as its argument.
    assert.ok(typeof diag.code === 'object', 'the code carries a link');
    const target = diag.code.target;
    assert.strictEqual(target.scheme, 'command');
    assert.strictEqual(target.path, 'torchlint.showRuleDocumentation');
    const args = JSON.parse(decodeURIComponent(target.query)) as string[];
    assert.deepStrictEqual(args, ['TL601']);
    const linked = await vscode.commands.executeCommand<vscode.TextDocument>(target.path, ...args);
    assert.strictEqual(linked?.uri.toString(), 'torchlint-docs:/TL601.md');
  });

  test('switching to the bundled server restarts it, and the bundled server lints', async () => {
    const server = await controller();
    const before = server.client;
    const cfg = vscode.workspace.getConfiguration('torchlint');
    await cfg.update('importStrategy', 'useBundled', vscode.ConfigurationTarget.Workspace);
    try {
      await waitFor('a new running server', () => server.client !== before && server.client?.isRunning());
      const launcher = path.join('bundled', 'tool', 'server.py');
      assert.ok(server.commandLine.some((arg) => arg.endsWith(launcher)), `started ${server.commandLine.join(' ')}`);
      const uri = workspaceUri('bundled_check.py');
      await vscode.workspace.fs.writeFile(uri, Buffer.from('import torch\n\nstate = torch.load("a.pt")\n'));
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
      await diagnosticsWith(uri, 'TL601');
    } finally {
      await cfg.update('importStrategy', undefined, vscode.ConfigurationTarget.Workspace);
    }
  });

  test('"torchlint.enable": false stops the server and clears its findings', async () => {
    const server = await controller();
    const uri = workspaceUri('severity.py');
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    await diagnosticsWith(uri, 'TL601');
    const cfg = vscode.workspace.getConfiguration('torchlint');
    await cfg.update('enable', false, vscode.ConfigurationTarget.Workspace);
    try {
      await waitFor('the server to stop', () => server.client === undefined);
      await waitFor('findings to clear', () => vscode.languages.getDiagnostics(uri).length === 0);
    } finally {
      await cfg.update('enable', undefined, vscode.ConfigurationTarget.Workspace);
    }
    await waitFor('the server to come back', () => server.client?.isRunning());
    await diagnosticsWith(uri, 'TL601');
  });
});

suite('Runtime probe', () => {
  test('"Run Runtime Probe on This File" runs the script and shows what it saw', async function () {
    this.timeout(300_000); // starts torch and trains a few steps
    const uri = workspaceUri('probe_target.py');
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    await diagnosticsWith(uri, 'TL101');
    const cfg = vscode.workspace.getConfiguration('torchlint');
    await cfg.update('probe.enabled', true, vscode.ConfigurationTarget.Workspace);
    try {
      const result = await vscode.commands.executeCommand<{ observations: number; confirmed: number }>('torchlint.runProbeOnFile');
      assert.ok(result && result.observations >= 1, `the probe observed something: ${JSON.stringify(result)}`);
      const seen = await waitFor('a probe diagnostic', () =>
        vscode.languages.getDiagnostics(uri).find((d) => d.source === 'torchlint-probe'),
      );
      assert.match(seen.message, /never cleared/);
      // at `opt.step()` itself, not from column 1
      assert.deepStrictEqual([seen.range.start.line, seen.range.start.character, seen.range.end.character], [10, 4, 14]);
      assert.ok(typeof seen.code === 'object' && seen.code.value === 'grads-not-cleared', 'the kind, with a link');
      const docs = await vscode.commands.executeCommand<vscode.TextDocument>('torchlint.showRuleDocumentation', 'grads-not-cleared');
      assert.match(docs?.getText() ?? '', /^# Runtime probe: grads-not-cleared/);
      // the static finding the run confirmed says so
      assert.strictEqual(result.confirmed, 1);
      const marked = await waitFor('TL101 marked confirmed', () =>
        vscode.languages.getDiagnostics(uri).find((d) => d.source === 'torchlint' && /confirmed by the runtime probe/.test(d.message)),
      );
      assert.strictEqual(codes([marked])[0], 'TL101');

      // two lines typed above: the observation moves with its line, and the lint the edit starts keeps the mark
      const edit = new vscode.WorkspaceEdit();
      edit.insert(uri, new vscode.Position(0, 0), '# data\n# model\n');
      assert.ok(await vscode.workspace.applyEdit(edit));
      const moved = await waitFor('TL101 two lines down', () => {
        const found = vscode.languages.getDiagnostics(uri);
        const lines = found.filter((d) => d.source === 'torchlint' && codes([d])[0] === 'TL101').map((d) => d.range.start.line);
        return lines.length === 1 && lines[0] === marked.range.start.line + 2 ? found : undefined;
      });
      const probe = moved.filter((d) => d.source === 'torchlint-probe');
      assert.deepStrictEqual(probe.map((d) => [d.range.start.line, d.range.start.character]), [[12, 4]], 'the observation at `opt.step()`, moved');
      const [kept] = moved.filter((d) => d.source === 'torchlint');
      assert.match(kept.message, /\[confirmed by the runtime probe\]$/, 'the mark survives the lint after the edit');
      await vscode.commands.executeCommand('workbench.action.files.revert');
    } finally {
      await cfg.update('probe.enabled', undefined, vscode.ConfigurationTarget.Workspace);
    }
  });
});
