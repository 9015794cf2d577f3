/** Waiting on the real VS Code API: diagnostics, the extension, its server. */
import * as assert from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ServerController } from '../../../src/server';

export const EXTENSION_ID = 'torchlint.torchlint';

export async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}${last ? `: ${last}` : ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The extension under test, activated: its server controller. */
export async function controller(): Promise<ServerController> {
  const ext = vscode.extensions.getExtension<ServerController>(EXTENSION_ID);
  assert.ok(ext, `${EXTENSION_ID} is installed`);
  return ext.activate();
}

/** The workspace folder of that name (a copy of test/fixtures/<name>). */
export function workspaceFolder(name = 'workspace'): vscode.WorkspaceFolder {
  const folder = vscode.workspace.workspaceFolders?.find((f) => f.name === name);
  assert.ok(folder, `the workspace folder ${name} is open`);
  return folder;
}

export function workspaceUri(file: string, folder = 'workspace'): vscode.Uri {
  return vscode.Uri.joinPath(workspaceFolder(folder).uri, file);
}

export function codes(diagnostics: readonly vscode.Diagnostic[]): string[] {
  return diagnostics
    .map((d) => (typeof d.code === 'object' ? String(d.code.value) : String(d.code)))
    .sort();
}

/** Diagnostics of `uri` once they include `code`. */
export function diagnosticsWith(uri: vscode.Uri, code: string, timeoutMs?: number): Promise<vscode.Diagnostic[]> {
  return waitFor(`${code} on ${uri.path}`, () => {
    const found = vscode.languages.getDiagnostics(uri);
    return codes(found).includes(code) ? found : undefined;
  }, timeoutMs);
}

export function diagnosticsWithout(uri: vscode.Uri, code: string): Promise<vscode.Diagnostic[]> {
  return waitFor(`${code} to clear on ${uri.path}`, () => {
    const found = vscode.languages.getDiagnostics(uri);
    return codes(found).includes(code) ? undefined : found;
  });
}

/** The quick fixes the server offers for one diagnostic. */
export async function quickFixes(uri: vscode.Uri, diagnostic: vscode.Diagnostic): Promise<vscode.CodeAction[]> {
  const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>(
    'vscode.executeCodeActionProvider',
    uri,
    diagnostic.range,
    vscode.CodeActionKind.QuickFix.value,
  );
  // The API drops `diagnostics` from the actions it returns: the server names the code in each title.
  const code = codes([diagnostic])[0];
  return (actions ?? []).filter((a) => a.title.includes(code));
}

/**
 * A screenshot of the window as it is now, as `<name>.png` in the run's output folder: the driver
 * outside the browser (runSuite.mjs) takes it when it sees the request file, then removes the file.
 */
export async function screenshot(name: string): Promise<void> {
  const dir = process.env.TORCHLINT_E2E_SHOTS;
  assert.ok(dir, 'the driver names a folder for screenshots (TORCHLINT_E2E_SHOTS)');
  await new Promise((r) => setTimeout(r, 1000)); // squiggles and the Problems count render after the diagnostics
  const request = path.join(dir, `${name}.shot-request`);
  fs.writeFileSync(request, name);
  await waitFor(`the screenshot ${name}`, () => !fs.existsSync(request), 30_000);
  assert.ok(fs.existsSync(path.join(dir, `${name}.png`)), `${name}.png was written`);
}
