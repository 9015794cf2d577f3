/** The slice of the `vscode` API the client uses, as a controllable fake for unit tests. */
import { vi } from 'vitest';

/** Window-level settings (user and workspace), by key without the section. */
export const config: Record<string, unknown> = {};
/** Folder-level settings, by folder path: they win over `config` for resources in that folder. */
export const folderConfig: Record<string, Record<string, unknown>> = {};
export const updates: Array<{ key: string; value: unknown; target: unknown }> = [];
/** Every key read through `getConfiguration(...).get`. */
export const reads = new Set<string>();

export class Uri {
  private constructor(
    readonly fsPath: string,
    readonly scheme = 'file',
    readonly query = '',
  ) {}
  static file(p: string): Uri {
    return new Uri(p);
  }
  static parse(s: string): Uri {
    return new Uri(s.replace(/^file:\/\//, ''));
  }
  static from(parts: { scheme: string; path: string; query?: string }): Uri {
    return new Uri(parts.path, parts.scheme, parts.query ?? '');
  }
  get path(): string {
    return this.fsPath;
  }
  toString(): string {
    if (this.scheme === 'file') return `file://${this.fsPath}`;
    return `${this.scheme}:${this.fsPath}${this.query ? `?${this.query}` : ''}`;
  }
}

interface Folder {
  uri: Uri;
  name: string;
  index: number;
}

export function folder(fsPath: string, index = 0): Folder {
  return { uri: Uri.file(fsPath), name: fsPath.split('/').pop() ?? fsPath, index };
}

const disposable = () => ({ dispose: vi.fn() });

export const workspace = {
  isTrusted: true,
  workspaceFolders: [folder('/ws')] as Folder[] | undefined,
  getWorkspaceFolder: vi.fn((uri: Uri) =>
    workspace.workspaceFolders?.find((f) => uri.fsPath === f.uri.fsPath || uri.fsPath.startsWith(`${f.uri.fsPath}/`)),
  ),
  getConfiguration: vi.fn((_section: string, scope?: Uri) => {
    const owner = scope && workspace.getWorkspaceFolder(scope);
    const values = { ...config, ...(owner ? folderConfig[owner.uri.fsPath] : {}) };
    return {
      get: <T>(key: string, fallback: T): T => {
        reads.add(key);
        return key in values ? (values[key] as T) : fallback;
      },
      update: async (key: string, value: unknown, target: unknown) => {
        updates.push({ key, value, target });
        config[key] = value;
      },
    };
  }),
  onDidChangeConfiguration: vi.fn(disposable),
  onDidGrantWorkspaceTrust: vi.fn(disposable),
  onDidChangeWorkspaceFolders: vi.fn(disposable),
  registerTextDocumentContentProvider: vi.fn((_scheme: string, _provider: unknown) => disposable()),
};

/** An in-memory `ExtensionContext.workspaceState`. */
export function memento(): { get<T>(key: string, fallback: T): T; update(key: string, value: unknown): Promise<void> } {
  const values = new Map<string, unknown>();
  return {
    get: <T>(key: string, fallback: T): T => (values.has(key) ? (values.get(key) as T) : fallback),
    update: async (key: string, value: unknown) => {
      values.set(key, value);
    },
  };
}

export const window = {
  showErrorMessage: vi.fn(async (..._args: unknown[]) => undefined as string | undefined),
  showWarningMessage: vi.fn(async (..._args: unknown[]) => undefined as string | undefined),
  showInformationMessage: vi.fn(async (..._args: unknown[]) => undefined as string | undefined),
  withProgress: vi.fn(async (_opts: unknown, task: () => Promise<unknown>) => task()),
  createOutputChannel: vi.fn(() => ({ info: vi.fn(), warn: vi.fn(), error: vi.fn(), show: vi.fn(), dispose: vi.fn() })),
};

export const commands = {
  executeCommand: vi.fn(async (..._args: unknown[]) => undefined),
  registerCommand: vi.fn((_id: string, _handler: unknown) => disposable()),
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
  for (const key of Object.keys(folderConfig)) delete folderConfig[key];
  updates.length = 0;
  reads.clear();
  statusItems.length = 0;
  workspace.isTrusted = true;
  workspace.workspaceFolders = [folder('/ws')];
  vi.clearAllMocks();
}
