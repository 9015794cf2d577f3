/** Starts, stops and restarts the torchlint language server for this window (see ./folders for multi-root). */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as vscode from 'vscode';
import {
  type ClientCapabilities,
  DidChangeConfigurationNotification,
  LanguageClient,
  type LanguageClientOptions,
  RevealOutputChannelOn,
  type ServerOptions,
  State,
  type StaticFeature,
  TransportKind,
} from 'vscode-languageclient/node';
import { projectRoot } from './folders';
import { LeveledChannel } from './logChannel';
import { chooseInterpreter, inspectPython, type PythonInfo, versionProblem } from './interpreter';
import { COMMAND, SECTION } from './manifest';
import { offerPipInstall } from './pipInstall';
import { activeInterpreter } from './pythonExtension';
import { SerialRunner } from './restart';
import { linkDocs } from './ruleDocs';
import { bundledLibs, serverCommand, serverSettings } from './serverCommand';
import { readSettings, settingId, type Settings } from './settings';
import { type ServerStatus, shortPath } from './status';

export const DOCUMENT_SELECTOR = [
  { scheme: 'file', language: 'python' },
  { scheme: 'untitled', language: 'python' },
  { notebook: { notebookType: 'jupyter-notebook' }, language: 'python' },
];

export class ServerController implements vscode.Disposable {
  client: LanguageClient | undefined;
  /** The Python running the server, once started. */
  python: PythonInfo | undefined;
  /** The command line of the running server (empty when none runs). */
  commandLine: string[] = [];
  /** The project root the last start followed. */
  private startedFor: vscode.Uri | undefined;
  private readonly runner: SerialRunner;

  constructor(
    private readonly extensionPath: string,
    private readonly log: vscode.LogOutputChannel,
    private readonly status: ServerStatus,
    /** Whether the user allowed the probe in this workspace (./probeConsent): it counts as `probe.enabled`. */
    private readonly probeConsent: () => boolean = () => false,
  ) {
    this.runner = new SerialRunner(
      async () => {
        await this.stop();
        await this.start();
      },
      (err) => this.fail(`torchlint could not start: ${errorText(err)}`),
    );
  }

  /** (Re)starts the server; concurrent calls collapse into one restart with the latest settings. */
  restart(): Promise<void> {
    return this.runner.request();
  }

  /**
   * The settings for `scope` (a file or a workspace folder): its folder's values over the
   * workspace's and the user's. Without a scope, the window's values, which files outside every
   * folder get.
   */
  settings(scope?: vscode.Uri): Settings {
    const folder = scope ? vscode.workspace.getWorkspaceFolder(scope) : this.root();
    const settings = readSettings(vscode.workspace.getConfiguration(SECTION, scope), {
      trusted: vscode.workspace.isTrusted,
      workspaceFolder: folder?.uri.fsPath,
      env: process.env,
    });
    if (vscode.workspace.isTrusted && this.probeConsent()) settings.probe = { ...settings.probe, enabled: true };
    return settings;
  }

  /** The folder the server process follows (./folders). */
  root(): vscode.WorkspaceFolder | undefined {
    return projectRoot(vscode.workspace.workspaceFolders ?? []);
  }

  /** After folders were added or removed: a new project root needs a new process. */
  async foldersChanged(): Promise<void> {
    if (this.root()?.uri.toString() !== this.startedFor?.toString()) await this.restart();
  }

  private async start(): Promise<void> {
    const root = this.root();
    this.startedFor = root?.uri;
    const settings = this.settings(root?.uri);
    // One server for every folder: it runs unless every folder turned torchlint off.
    const folders = vscode.workspace.workspaceFolders ?? [];
    const scopes = folders.length > 0 ? folders.map((f) => f.uri) : [undefined];
    if (!scopes.some((scope) => this.settings(scope).enable)) {
      this.status.set('disabled', `${settingId('enable')} is off`);
      return;
    }
    this.status.set('starting');
    const fromPython = await activeInterpreter(root?.uri).catch((err) => {
      this.log.warn(`could not ask the Python extension for its interpreter: ${errorText(err)}`);
      return undefined;
    });
    const interpreter = chooseInterpreter(settings.interpreter, fromPython, process.platform);
    this.log.info(`interpreter (${interpreter.source}): ${interpreter.command.join(' ')}`);
    let info: PythonInfo;
    try {
      info = await inspectPython(interpreter.command);
    } catch (err) {
      return this.fail(`${errorText(err)} Select a Python 3.10+ interpreter for torchlint.`, true);
    }
    this.log.info(`Python ${info.version.join('.')}: ${info.executable}`);
    const tooOld = versionProblem(info);
    if (tooOld) return this.fail(tooOld, true);

    if (settings.importStrategy === 'useBundled' && !fs.existsSync(bundledLibs(this.extensionPath, info))) {
      const reason = `The torchlint bundled with this extension cannot run on Python ${info.version
        .slice(0, 2)
        .join('.')} (${process.platform}-${process.arch}).`;
      this.fail(reason, false, false);
      // Changing importStrategy restarts the server through the configuration listener.
      if (vscode.workspace.isTrusted) await offerPipInstall(interpreter.command, reason, this.log, this.extensionPath);
      return;
    }

    const cmd = serverCommand(settings, interpreter.command, this.extensionPath);
    this.log.info(`starting: ${[cmd.command, ...cmd.args].join(' ')}`);
    const serverOptions: ServerOptions = {
      command: cmd.command,
      args: cmd.args,
      transport: TransportKind.stdio,
      options: { env: { ...process.env, ...cmd.env }, cwd: root?.uri.fsPath },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: DOCUMENT_SELECTOR,
      outputChannel: new LeveledChannel(this.log),
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      // The window's settings; the server asks for each folder's (the middleware below).
      initializationOptions: { settings: serverSettings(this.settings(), info.executable) },
      middleware: {
        // Each code links to its documentation inside the editor (./ruleDocs), not to a web page.
        handleDiagnostics: (uri, diagnostics, next) => next(uri, linkDocs(diagnostics)),
        workspace: {
          // Answer `workspace/configuration` for our section in the server's vocabulary, per scope.
          configuration: async (params, token, next) => {
            const answers = await next(params, token);
            if (!Array.isArray(answers)) return answers;
            return params.items.map((item, i) =>
              item.section === SECTION
                ? serverSettings(this.settings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined), info.executable)
                : answers[i],
            );
          },
        },
      },
    };
    // The id is the section: the client follows `<id>.trace.server` itself.
    const client = new LanguageClient(SECTION, 'torchlint', serverOptions, clientOptions);
    client.registerFeature(new PushDiagnostics());
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) this.status.set('running', describe(info, settings));
      else if (e.newState === State.Stopped && this.client === client) this.status.set('error', 'the server stopped');
    });
    this.client = client;
    this.python = info;
    this.commandLine = [cmd.command, ...cmd.args];
    try {
      await client.start();
    } catch (err) {
      this.client = undefined;
      this.commandLine = [];
      const reason = `The torchlint server failed to start: ${errorText(err)}`;
      this.fail(reason, false);
      if (settings.importStrategy === 'useBundled' && vscode.workspace.isTrusted) {
        await offerPipInstall(interpreter.command, reason, this.log, this.extensionPath);
      }
      return;
    }
    this.status.set('running', describe(info, settings));
  }

  /**
   * Tells the running server that live settings (severity, select, ...) changed. No values: one
   * set cannot be right for every folder, so the server asks again per folder (`workspace/configuration`).
   */
  async notifySettingsChanged(): Promise<void> {
    if (this.client?.state !== State.Running) return;
    await this.client.sendNotification(DidChangeConfigurationNotification.type, { settings: null });
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.python = undefined;
    this.commandLine = [];
    if (client) {
      try {
        await client.stop(5000);
      } catch (err) {
        this.log.warn(`stopping the server: ${errorText(err)}`);
      }
      await client.dispose().catch(() => undefined);
    }
    this.status.set('stopped');
  }

  private fail(message: string, offerInterpreter = false, notify = true): void {
    this.log.error(message);
    this.status.set('error', message);
    if (!notify) return;
    const actions = offerInterpreter ? ['Select Interpreter', 'Show Output'] : ['Show Output'];
    void vscode.window.showErrorMessage(message, ...actions).then((choice) => {
      if (choice === 'Select Interpreter') void vscode.commands.executeCommand(COMMAND.selectInterpreter);
      else if (choice === 'Show Output') this.log.show();
    });
  }

  dispose(): void {
    void this.stop();
  }
}

/**
 * vscode-languageclient 9 pulls diagnostics only for text editors, never for
 * notebook cells: not offering pull makes the server push them for every document.
 */
export class PushDiagnostics implements StaticFeature {
  getState() {
    return { kind: 'static' } as const;
  }
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    if (capabilities.textDocument) delete capabilities.textDocument.diagnostic;
  }
  initialize(): void {}
  clear(): void {}
}

/** The status popup's line: short, so that its "Show Output" stays in view (the log has the full path). */
function describe(info: PythonInfo, settings: Settings): string {
  const where = settings.importStrategy === 'useBundled' ? 'bundled' : 'from environment';
  return `Python ${info.version.join('.')} (${shortPath(info.executable, os.homedir())}), ${where}`;
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
