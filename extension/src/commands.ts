/**
 * The client's commands: a handler for each command package.json contributes, except those the
 * server provides, which the language client registers while the server runs (registering them
 * here too would clash).
 */
import * as vscode from 'vscode';
import { ExecuteCommandRequest } from 'vscode-languageclient/node';
import { COMMAND, type CommandId, SECTION } from './manifest';
import type { ProbeConsent } from './probeConsent';
import { hasPythonExtension } from './pythonExtension';
import { docsUri, RULE_DOCS_COMMAND } from './ruleDocs';
import type { ServerController } from './server';
import { settingId } from './settings';

/** Contributed commands the server provides (in its `executeCommandProvider`). */
export const SERVER_PROVIDED = [COMMAND.lintWorkspace] as const;

/** The server's own commands the client sends for one document or rule (also in `executeCommandProvider`). */
export const SERVER_COMMAND = {
  runProbe: `${SECTION}.runProbe`,
  applyAllFixes: `${SECTION}.applyAllFixes`,
  ruleDocs: RULE_DOCS_COMMAND,
} as const;

type ClientCommand = Exclude<CommandId, (typeof SERVER_PROVIDED)[number]>;

export function registerCommands(
  server: ServerController,
  log: vscode.LogOutputChannel,
  consent: ProbeConsent,
): vscode.Disposable[] {
  const running = () => {
    if (server.client?.isRunning()) return server.client;
    void vscode.window.showWarningMessage('The torchlint server is not running.', 'Show Output').then((c) => {
      if (c) log.show();
    });
    return undefined;
  };
  const pythonEditor = () => {
    const editor = vscode.window.activeTextEditor;
    if (editor?.document.languageId === 'python') return editor;
    void vscode.window.showInformationMessage('Open a Python file first.');
    return undefined;
  };
  // A Record over ClientCommand: a contributed command without a handler does not compile.
  const handlers: Record<ClientCommand, (...args: never[]) => unknown> = {
    [COMMAND.restart]: () => server.restart(),
    [COMMAND.showLogs]: () => log.show(),
    [COMMAND.selectInterpreter]: async () => {
      if (hasPythonExtension()) await vscode.commands.executeCommand('python.setInterpreter');
      else await vscode.commands.executeCommand('workbench.action.openSettings', settingId('interpreter'));
    },
    [COMMAND.fixAll]: async () => {
      const editor = pythonEditor();
      const client = editor && running();
      if (!editor || !client) return;
      await client.sendRequest(ExecuteCommandRequest.type, {
        command: SERVER_COMMAND.applyAllFixes,
        arguments: [editor.document.uri.toString()],
      });
    },
    [COMMAND.showRuleDocumentation]: async (code?: string) => {
      if (!running()) return undefined;
      const chosen = code ?? (await pickRuleCode());
      if (!chosen) return undefined;
      try {
        // A virtual document (./ruleDocs): read-only, never dirty, rendered by the server.
        const doc = await vscode.workspace.openTextDocument(docsUri(chosen.trim()));
        await vscode.commands.executeCommand('markdown.showPreview', doc.uri);
        return doc;
      } catch (err) {
        void vscode.window.showErrorMessage(`torchlint: ${err instanceof Error ? err.message : String(err)}`);
        return undefined;
      }
    },
    [COMMAND.runProbeOnFile]: async () => {
      const editor = pythonEditor();
      const client = editor && running();
      if (!editor || !client) return undefined;
      if (!vscode.workspace.isTrusted) {
        void vscode.window.showWarningMessage('The runtime probe runs your code: trust this workspace first.');
        return undefined;
      }
      // A notebook cell: the probe runs the whole notebook, saved, as "Run All" would.
      const notebook = vscode.workspace.notebookDocuments.find((nb) =>
        nb.getCells().some((cell) => cell.document === editor.document),
      );
      const target = notebook ?? editor.document;
      if (target.uri.scheme !== 'file') {
        void vscode.window.showInformationMessage('The runtime probe runs scripts saved on disk.');
        return undefined;
      }
      if (!server.settings(target.uri).probe.enabled) {
        const enable = 'Enable and Run';
        const answer = await vscode.window.showWarningMessage(
          'The runtime probe executes this file for a few training steps. Allow it in this workspace?',
          { modal: true },
          enable,
        );
        if (answer !== enable) return undefined;
        await consent.give();
        await server.notifySettingsChanged();
      }
      await target.save();
      const name = target.uri.path.split('/').pop();
      try {
        const result = await client.sendRequest(ExecuteCommandRequest.type, {
          command: SERVER_COMMAND.runProbe,
          arguments: [target.uri.toString()],
        });
        const count = (result as { observations?: number } | null)?.observations ?? 0;
        void vscode.window.showInformationMessage(`torchlint probe: ${count} observation${count === 1 ? '' : 's'} in ${name}.`);
        return result;
      } catch (err) {
        // The language client has logged the failed request already: once is enough.
        void vscode.window.showErrorMessage(`torchlint probe: ${err instanceof Error ? err.message : String(err)}`);
        return undefined;
      }
    },
  };
  return Object.entries(handlers).map(([id, handler]) => vscode.commands.registerCommand(id, handler));
}

/** The code of the torchlint finding under the cursor, else a pick among the file's, else typed in. */
async function pickRuleCode(): Promise<string | undefined> {
  const editor = vscode.window.activeTextEditor;
  const found = editor
    ? vscode.languages.getDiagnostics(editor.document.uri).filter((d) => d.source === 'torchlint')
    : [];
  const here = found.filter((d) => editor && d.range.contains(editor.selection.active));
  const codes = [...new Set((here.length > 0 ? here : found).map((d) => String(typeof d.code === 'object' ? d.code.value : d.code)))];
  if (codes.length === 1 && here.length > 0) return codes[0];
  if (codes.length > 0) return vscode.window.showQuickPick(codes.sort(), { placeHolder: 'Which rule?' });
  return vscode.window.showInputBox({ prompt: 'Rule code', placeHolder: 'TL101' });
}
