/** Restricted mode: the workspace's settings cannot choose what runs, and the probe stays off. */
import * as assert from 'node:assert';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { controller, diagnosticsWith, waitFor, workspaceUri } from './helpers';

suite('Untrusted workspace', () => {
  test('runs the bundled server on the user\'s interpreter, whatever the workspace settings say', async () => {
    assert.strictEqual(vscode.workspace.isTrusted, false, 'the workspace opened in restricted mode');
    const server = await controller();
    await waitFor('a running server', () => server.client?.isRunning());
    const launcher = path.join('bundled', 'tool', 'server.py');
    assert.ok(server.commandLine.some((arg) => arg.endsWith(launcher)), `started ${server.commandLine.join(' ')}`);
    assert.ok(!server.commandLine.some((arg) => arg.includes('evil-python')), 'not the workspace interpreter');
    const uri = workspaceUri('checkpoint.py');
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    await diagnosticsWith(uri, 'TL601');
  });

  test('refuses to run the probe', async () => {
    const uri = workspaceUri('probe_target.py');
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    await diagnosticsWith(uri, 'TL101');
    const result = await vscode.commands.executeCommand('torchlint.runProbeOnFile');
    assert.strictEqual(result, undefined);
    assert.ok(!vscode.languages.getDiagnostics(uri).some((d) => d.source === 'torchlint-probe'));
  });
});
