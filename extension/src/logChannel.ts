/**
 * The output channel the language client writes to, with each line logged at its own level.
 *
 * vscode-languageclient writes everything as plain lines: its own messages as `[Error - 10:02:03] ...`
 * and the server's stderr (Python logging: `WARNING:torchlint.lsp:...`, tracebacks after) as it comes.
 * On a log channel that is all `[info]`, and a server that exits normally on a restart reads
 * `[Error - ...] Server process exited with code 0.`. Here each line goes to the level it names;
 * continuation lines (a traceback, a trace's JSON) follow the line they continue.
 */
import type * as vscode from 'vscode';

export type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error';

/** The client's own message headers (`[Error - 10:02:03] `), its trace (`[Trace - ...]`, `[LSP   - ...]`). */
const CLIENT_HEADER = /^\[(Error|Warn|Info|Debug|Trace|LSP)\s*- [^\]]*\]\s?/;
const CLIENT_LEVEL: Record<string, Level> = {
  Error: 'error',
  Warn: 'warn',
  Info: 'info',
  Debug: 'debug',
  // The LSP trace is asked for (`torchlint.trace.server`): shown at the channel's default level.
  Trace: 'info',
  LSP: 'info',
};
/** Python logging's default format, `LEVEL:logger:message`. */
const PYTHON_RECORD = /^(CRITICAL|ERROR|WARNING|INFO|DEBUG):[\w.]+:/;
const PYTHON_LEVEL: Record<string, Level> = {
  CRITICAL: 'error',
  ERROR: 'error',
  WARNING: 'warn',
  INFO: 'info',
  DEBUG: 'debug',
};

/** The level of one line and its text as logged; `undefined` level: it continues the previous line. */
export function classify(line: string): { level: Level | undefined; text: string } {
  const client = CLIENT_HEADER.exec(line);
  if (client) {
    const text = line.slice(client[0].length);
    // The server process ends on every stop and restart: exit code 0 is the normal way.
    if (client[1] === 'Error' && /^Server process exited with code 0\.?$/.test(text)) return { level: 'info', text };
    return { level: CLIENT_LEVEL[client[1]], text };
  }
  const record = PYTHON_RECORD.exec(line);
  if (record) return { level: PYTHON_LEVEL[record[1]], text: line };
  return { level: undefined, text: line };
}

/** An OutputChannel for the language client that logs each line on `log` at its level. */
export class LeveledChannel implements vscode.OutputChannel {
  private partial = '';
  private level: Level = 'info';

  constructor(private readonly log: vscode.LogOutputChannel) {}

  get name(): string {
    return this.log.name;
  }

  append(value: string): void {
    const lines = (this.partial + value).split(/\r?\n/);
    this.partial = lines.pop() ?? '';
    for (const line of lines) this.write(line);
  }

  appendLine(value: string): void {
    this.append(`${value}\n`);
  }

  private write(line: string): void {
    if (line.trim() === '') return;
    const { level, text } = classify(line);
    if (level !== undefined) this.level = level;
    this.log[this.level](text);
  }

  replace(value: string): void {
    this.partial = '';
    this.log.replace(value);
  }

  clear(): void {
    this.partial = '';
    this.log.clear();
  }

  show(columnOrPreserveFocus?: vscode.ViewColumn | boolean, preserveFocus?: boolean): void {
    if (typeof columnOrPreserveFocus === 'boolean') this.log.show(columnOrPreserveFocus);
    else this.log.show(columnOrPreserveFocus, preserveFocus);
  }

  hide(): void {
    this.log.hide();
  }

  dispose(): void {
    // The log channel belongs to the extension, which disposes it.
  }
}
