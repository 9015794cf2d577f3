/**
 * A multi-root workspace (folders `workspace` and `second`, the second with its own
 * .vscode/settings.json): one server lints both, and the client answers the server's
 * `workspace/configuration` with each folder's own settings.
 */
import * as assert from 'node:assert';
import * as vscode from 'vscode';
import { controller, diagnosticsWith, waitFor, workspaceFolder, workspaceUri } from './helpers';

suite('Multi-root workspace', () => {
  test('one server, started for the first folder, lints the files of every folder', async () => {
    const server = await controller();
    await waitFor('a running server', () => server.client?.isRunning());
    assert.strictEqual(server.root()?.name, 'workspace');
    for (const uri of [workspaceUri('severity.py'), workspaceUri('load.py', 'second')]) {
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
      await diagnosticsWith(uri, 'TL601');
    }
  });

  test("workspace/configuration is answered with each folder's settings", async () => {
    const server = await controller();
    const client = await waitFor('a running server', () => (server.client?.isRunning() ? server.client : undefined));
    const configuration = client.clientOptions.middleware?.workspace?.configuration;
    assert.ok(configuration, 'the client answers workspace/configuration itself');
    const item = (folder?: string) => ({ section: 'torchlint', scopeUri: folder && workspaceFolder(folder).uri.toString() });
    const answers = await configuration(
      { items: [item('second'), item('workspace'), item()] },
      new vscode.CancellationTokenSource().token,
      async (params) => params.items.map(() => null),
    );
    assert.ok(Array.isArray(answers), `answers: ${JSON.stringify(answers)}`);
    const [second, first, window] = answers as Array<{ severity: object; ignore: string[] }>;
    assert.deepStrictEqual([second.severity, second.ignore], [{ TL601: 'error' }, ['TL101']]);
    assert.deepStrictEqual([first.severity, first.ignore], [{}, []]);
    assert.deepStrictEqual([window.severity, window.ignore], [{}, []]);
  });
});
