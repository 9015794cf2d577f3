/** The slice of the `vscode` API the client uses, as a controllable fake for unit tests. */
import { vi } from 'vitest';

export const config: Record<string, unknown> = {};
export const updates: Array<{ key: string; value: unknown; target: unknown }> = [];

export class Uri {
  private constructor(readonly fsPath: string) {}
  static file(p: string): Uri {
    return new Uri(p);
  }
  static parse(s: string): Uri {
    return new Uri(s.replace(/^file:\/\//, ''));
  }
  toString(): string {
    return `file://${this.fsPath}`;
  }
}

export const workspace = {
  isTrusted: true,
  workspaceFolders: [{ uri: Uri.file('/ws'), name: 'ws', index: 0 }] as unknown[] | undefined,
  getWorkspaceFolder: vi.fn(() => workspace.workspaceFolders?.[0]),
  getConfiguration: vi.fn(() => ({
    get: <T>(key: string, fallback: T): T => (key in config ? (config[key] as T) : fallback),
    update: async (key: string, value: unknown, target: unknown) => {
      updates.push({ key, value, target });
      config[key] = value;
    },
  })),
};

export const window = {
  showErrorMessage: vi.fn(async (..._args: unknown[]) => undefined as string | undefined),
  showWarningMessage: vi.fn(async (..._args: unknown[]) => undefined as string | undefined),
  showInformationMessage: vi.fn(async (..._args: unknown[]) => undefined as string | undefined),
  withProgress: vi.fn(async (_opts: unknown, task: () => Promise<unknown>) => task()),
};

export const commands = {
  executeCommand: vi.fn(async (..._args: unknown[]) => undefined),
  registerCommand: vi.fn(),
};

export const extensions = { getExtension: vi.fn(() => undefined) };

export enum LanguageStatusSeverity {
  Information = 0,
  Warning = 1,
  Error = 2,
}

export const statusItems: Array<Record<string, unknown>> = [];
export const languages = {
  createLanguageStatusItem: vi.fn(() => {
    const item: Record<string, unknown> = { dispose: vi.fn() };
    statusItems.push(item);
    return item;
  }),
};

export enum ConfigurationTarget {
  Global = 1,
  Workspace = 2,
  WorkspaceFolder = 3,
}

export enum ProgressLocation {
  Notification = 15,
}

/** Puts the fake back to a fresh window with one trusted folder and no settings. */
export function resetVscode(): void {
  for (const key of Object.keys(config)) delete config[key];
  updates.length = 0;
  statusItems.length = 0;
  workspace.isTrusted = true;
  workspace.workspaceFolders = [{ uri: Uri.file('/ws'), name: 'ws', index: 0 }];
  vi.clearAllMocks();
}
