/** The language-status item: is the server running, and on which Python. */
import * as vscode from 'vscode';
import { COMMAND, SECTION } from './manifest';

/** The context key package.json's `when` clauses test. */
export const SERVER_RUNNING = `${SECTION}.serverRunning`;

export type ServerState = 'starting' | 'running' | 'stopped' | 'disabled' | 'error';

const LABELS: Record<ServerState, string> = {
  starting: '$(sync~spin) torchlint: starting',
  running: '$(check) torchlint',
  stopped: 'torchlint: stopped',
  disabled: 'torchlint: disabled',
  error: '$(error) torchlint: not running',
};

/** Longest interpreter path the status popup shows whole: wider pushes its command off a 1400 px window. */
export const MAX_PATH_CHARS = 40;

/**
 * `executable` as the status popup shows it: the home folder as `~`, and a path still too long
 * cut in the middle (`~/…/.venv/bin/python`), keeping its last folders, where venvs differ.
 */
export function shortPath(executable: string, home = '', max = MAX_PATH_CHARS): string {
  let shown = home && executable.startsWith(`${home}/`) ? `~${executable.slice(home.length)}` : executable;
  if (shown.length <= max) return shown;
  const parts = shown.split('/');
  const head = parts[0] === '' ? `/${parts[1]}` : parts[0];
  let tail = parts[parts.length - 1];
  for (let i = parts.length - 2; i > 1; i--) {
    const longer = `${parts[i]}/${tail}`;
    if (head.length + 3 + longer.length > max) break;
    tail = longer;
  }
  shown = `${head}/…/${tail}`;
  return shown.length <= max ? shown : `…${shown.slice(shown.length - max + 1)}`;
}

export class ServerStatus implements vscode.Disposable {
  private readonly item: vscode.LanguageStatusItem;
  state: ServerState = 'stopped';

  constructor() {
    this.item = vscode.languages.createLanguageStatusItem(`${SECTION}.status`, [
      { language: 'python' },
      { notebookType: 'jupyter-notebook', language: 'python' },
    ]);
    this.item.name = 'torchlint';
    this.set('stopped');
  }

  /** `detail` says which interpreter runs the server, or what went wrong. */
  set(state: ServerState, detail = ''): void {
    this.state = state;
    void vscode.commands.executeCommand('setContext', SERVER_RUNNING, state === 'running');
    this.item.text = LABELS[state];
    this.item.detail = detail;
    this.item.busy = state === 'starting';
    this.item.severity =
      state === 'error' ? vscode.LanguageStatusSeverity.Error : vscode.LanguageStatusSeverity.Information;
    this.item.command =
      state === 'error'
        ? { title: 'Select Interpreter', command: COMMAND.selectInterpreter }
        : { title: 'Show Output', command: COMMAND.showLogs };
  }

  dispose(): void {
    this.item.dispose();
  }
}
