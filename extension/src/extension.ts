/** Entry point: wires settings, interpreter changes and commands to the server controller. */
import * as vscode from 'vscode';
import { registerCommands } from './commands';
import { ProbeConsent } from './probeConsent';
import { onInterpreterChange } from './pythonExtension';
import { DOCS_SCHEME, RuleDocsProvider } from './ruleDocs';
import { configChangeAction } from './restart';
import { ServerController } from './server';
import { ServerStatus } from './status';

let controller: ServerController | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<ServerController> {
  const log = vscode.window.createOutputChannel('torchlint', { log: true });
  const status = new ServerStatus();
  const consent = new ProbeConsent(context.workspaceState);
  controller = new ServerController(context.extensionPath, log, status, () => consent.given);
  const server = controller;
  context.subscriptions.push(
    log,
    status,
    server,
    ...registerCommands(server, log, consent),
    vscode.workspace.registerTextDocumentContentProvider(DOCS_SCHEME, new RuleDocsProvider(() => server.client)),
  );
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      const action = configChangeAction((section) => e.affectsConfiguration(section));
      if (action === 'restart') void server.restart();
      else if (action === 'notify') void server.notifySettingsChanged();
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void server.restart()),
    vscode.workspace.onDidChangeWorkspaceFolders(() => void server.foldersChanged()),
  );
  const interpreterListener = await onInterpreterChange(() => void server.restart()).catch((err) => {
    log.warn(`not following the Python extension's interpreter: ${err}`);
    return undefined;
  });
  if (interpreterListener) context.subscriptions.push(interpreterListener);
  await server.restart();
  return server;
}

export async function deactivate(): Promise<void> {
  await controller?.stop();
  controller = undefined;
}
