/** The client around the server: activation, commands, restarts on setting changes. */
import * as assert from 'node:assert';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { controller, diagnosticsWith, waitFor, workspaceUri } from './helpers';

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

  test('"Show Rule Documentation" opens the rule of the finding under the cursor', async () => {
    const uri = workspaceUri('severity.py');
    const editor = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    const [diag] = await diagnosticsWith(uri, 'TL601');
    editor.selection = new vscode.Selection(diag.range.start, diag.range.start);
    const doc = await vscode.commands.executeCommand<vscode.TextDocument>('torchlint.showRuleDocumentation');
    assert.ok(doc, 'a documentation document');
    assert.strictEqual(doc.languageId, 'markdown');
    assert.match(doc.getText(), /TL601/);
    assert.match(doc.getText(), /weights_only/);
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
      const result = await vscode.commands.executeCommand<{ observations: number }>('torchlint.runProbeOnFile');
      assert.ok(result && result.observations >= 1, `the probe observed something: ${JSON.stringify(result)}`);
      const seen = await waitFor('a probe diagnostic', () =>
        vscode.languages.getDiagnostics(uri).find((d) => d.source === 'torchlint-probe'),
      );
      assert.match(seen.message, /never cleared/);
      assert.strictEqual(seen.range.start.line, 10, 'on the opt.step() line');
    } finally {
      await cfg.update('probe.enabled', undefined, vscode.ConfigurationTarget.Workspace);
    }
  });
});
