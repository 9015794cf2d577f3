/** The slice of `vscode-languageclient/node` the client uses: a LanguageClient that records what it was given. */
import { vi } from 'vitest';

export const State = { Stopped: 1, Running: 2, Starting: 3 };
export const RevealOutputChannelOn = { Never: 4 };
export const TransportKind = { stdio: 0 };
export const ExecuteCommandRequest = { type: 'workspace/executeCommand' };
export const DidChangeConfigurationNotification = { type: 'workspace/didChangeConfiguration' };

/** Every LanguageClient made since the last reset. */
export const clients: LanguageClient[] = [];

export class LanguageClient {
  static failStart: Error | undefined;
  state = State.Stopped;
  started = false;
  stopped = false;
  listeners: Array<(e: { newState: number }) => void> = [];
  features: unknown[] = [];
  sendNotification = vi.fn(async (..._args: unknown[]) => undefined);
  sendRequest = vi.fn(async (..._args: unknown[]) => undefined as unknown);

  constructor(
    readonly id: string,
    readonly name: string,
    readonly serverOptions: { command: string; args: string[]; options: { cwd?: string } },
    readonly clientOptions: Record<string, any>,
  ) {
    clients.push(this);
  }
  onDidChangeState(l: (e: { newState: number }) => void) {
    this.listeners.push(l);
  }
  async start() {
    if (LanguageClient.failStart) throw LanguageClient.failStart;
    this.started = true;
    this.state = State.Running;
    this.listeners.forEach((l) => l({ newState: State.Running }));
  }
  async stop() {
    this.stopped = true;
    this.state = State.Stopped;
  }
  async dispose() {}
  isRunning() {
    return this.state === State.Running;
  }
  registerFeature(f: unknown) {
    this.features.push(f);
  }
}

export function resetLanguageClient(): void {
  clients.length = 0;
  LanguageClient.failStart = undefined;
}
