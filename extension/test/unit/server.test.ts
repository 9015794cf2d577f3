import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { clients, LanguageClient, resetLanguageClient } from './languageclient.mock';
import * as vscode from './vscode.mock';

// The Python extension is not installed in these tests; the setting or PATH decides.
const pythonExtension = { activeInterpreter: vi.fn(async () => undefined as string[] | undefined) };
vi.mock('../../src/pythonExtension', () => pythonExtension);

const { ServerController } = await import('../../src/server');
const { ServerStatus } = await import('../../src/status');

const log = { info: vi.fn(), warn: vi.fn(), error: vi.fn(), show: vi.fn() } as any;

function fakePython(version: number[]): string[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'torchlint-py-'));
  const script = path.join(dir, 'python.sh');
  fs.writeFileSync(script, `echo '{"version": ${JSON.stringify(version)}, "executable": "/fake/python"}'\n`);
  return ['sh', script];
}

/** An extension folder whose bundle has libraries for the given CPython tags only. */
function extensionDir(tags: string[], wheel = true): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'torchlint-ext-'));
  for (const tag of tags) fs.mkdirSync(path.join(dir, 'bundled', 'libs', tag), { recursive: true });
  if (wheel) {
    fs.mkdirSync(path.join(dir, 'bundled', 'wheel'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'bundled', 'wheel', 'torchlint-0.2.0-py3-none-any.whl'), '');
  }
  return dir;
}

function controller(ext = extensionDir(['cp311'])) {
  const status = new ServerStatus();
  return { server: new ServerController(ext, log, status), status, ext };
}

beforeEach(() => {
  vscode.resetVscode();
  resetLanguageClient();
});

describe('ServerController', () => {
  it('starts the bundled server with the interpreter from the setting', async () => {
    vscode.config.interpreter = fakePython([3, 11, 2]);
    vscode.config.severity = { TL601: 'off' };
    const { server, status, ext } = controller();
    await server.restart();
    expect(clients).toHaveLength(1);
    const [client] = clients;
    expect(client.serverOptions.command).toBe('sh');
    expect(client.serverOptions.args.slice(1)).toEqual([path.join(ext, 'bundled', 'tool', 'server.py')]);
    expect(client.clientOptions.initializationOptions.settings).toMatchObject({ ignore: ['TL601'], interpreter: '/fake/python' });
    expect(status.state).toBe('running');
    expect(vscode.statusItems[0].detail).toBe('Python 3.11.2 (/fake/python), bundled');
    expect(vscode.commands.executeCommand).toHaveBeenCalledWith('setContext', 'torchlint.serverRunning', true);
  });

  it('asks the server to push diagnostics (the client never pulls them for notebook cells)', async () => {
    vscode.config.interpreter = fakePython([3, 11, 2]);
    const { server } = controller();
    await server.restart();
    const caps = { textDocument: { diagnostic: { dynamicRegistration: true }, hover: {} } };
    for (const f of clients[0].features as Array<{ fillClientCapabilities(c: unknown): void }>) f.fillClientCapabilities(caps);
    expect(caps.textDocument).toEqual({ hover: {} });
  });

  it('answers workspace/configuration for its section in the server vocabulary', async () => {
    vscode.config.interpreter = fakePython([3, 11, 2]);
    const { server } = controller();
    await server.restart();
    vscode.config.lintOnChange = false;
    const configuration = clients[0].clientOptions.middleware.workspace.configuration;
    const answers = await configuration(
      { items: [{ section: 'torchlint' }, { section: 'python' }] },
      undefined,
      async () => [{ raw: true }, { python: true }],
    );
    expect(answers[0]).toMatchObject({ run: 'onSave', interpreter: '/fake/python' });
    expect(answers[1]).toEqual({ python: true });
  });

  it('shortens a long interpreter path in the status popup', async () => {
    const python = fakePython([3, 11, 2]);
    const exe = `/srv/${'long-folder-name/'.repeat(5)}.venv/bin/python`;
    fs.writeFileSync(python[1], `echo '{"version": [3, 11, 2], "executable": "${exe}"}'\n`);
    vscode.config.interpreter = python;
    const { server } = controller();
    await server.restart();
    expect(vscode.statusItems[0].detail).toBe('Python 3.11.2 (/srv/…/long-folder-name/.venv/bin/python), bundled');
    expect(log.info).toHaveBeenCalledWith(`Python 3.11.2: ${exe}`);
  });

  it("counts the user's consent kept in workspace state as probe.enabled, in a trusted workspace only", async () => {
    vscode.config.interpreter = fakePython([3, 11, 2]);
    let consented = false;
    const server = new ServerController(extensionDir(['cp311']), log, new ServerStatus(), () => consented);
    expect(server.settings().probe.enabled).toBe(false);
    consented = true;
    expect(server.settings().probe.enabled).toBe(true);
    await server.restart();
    expect(clients[0].clientOptions.initializationOptions.settings.probe.enabled).toBe(true);
    expect(vscode.updates).toEqual([]); // nothing written into the project's settings
    vscode.workspace.isTrusted = false;
    expect(server.settings().probe.enabled).toBe(false);
  });

  it('stops the old server before starting the next', async () => {
    vscode.config.interpreter = fakePython([3, 11, 2]);
    const { server } = controller();
    await server.restart();
    await server.restart();
    expect(clients).toHaveLength(2);
    expect(clients[0].stopped).toBe(true);
    expect(clients[1].started).toBe(true);
  });

  it('uses the interpreter of the Python extension when the setting is empty', async () => {
    pythonExtension.activeInterpreter.mockResolvedValueOnce(fakePython([3, 11, 9]));
    const { server } = controller();
    await server.restart();
    expect(clients[0].serverOptions.command).toBe('sh');
  });

  it('does nothing but say so when disabled', async () => {
    vscode.config.enable = false;
    const { server, status } = controller();
    await server.restart();
    expect(clients).toHaveLength(0);
    expect(status.state).toBe('disabled');
  });

  it('offers to select an interpreter when Python is missing', async () => {
    vscode.config.interpreter = ['/no/such/python'];
    const { server, status } = controller();
    await server.restart();
    expect(clients).toHaveLength(0);
    expect(status.state).toBe('error');
    expect(vscode.window.showErrorMessage).toHaveBeenCalledWith(
      expect.stringContaining('`/no/such/python` was not found'),
      'Select Interpreter',
      'Show Output',
    );
  });

  it('refuses a Python that is too old', async () => {
    vscode.config.interpreter = fakePython([3, 8, 18]);
    const { server } = controller();
    await server.restart();
    expect(clients).toHaveLength(0);
    expect(vscode.window.showErrorMessage).toHaveBeenCalledWith(
      'torchlint needs Python 3.10 or newer, but /fake/python is Python 3.8.18.',
      'Select Interpreter',
      'Show Output',
    );
  });

  it('offers pip when the bundle has no build for this Python, and switches to fromEnvironment on consent', async () => {
    vscode.config.interpreter = fakePython([3, 15, 0]);
    vscode.window.showWarningMessage.mockResolvedValueOnce('Install with pip');
    // The fake interpreter "installs" by succeeding at anything.
    const { server } = controller();
    await server.restart();
    expect(clients).toHaveLength(0);
    expect(vscode.window.showWarningMessage).toHaveBeenCalledWith(
      expect.stringContaining('cannot run on Python 3.15'),
      'Install with pip',
      'Select Interpreter',
    );
    expect(vscode.updates).toEqual([
      { key: 'importStrategy', value: 'fromEnvironment', target: vscode.ConfigurationTarget.Workspace },
    ]);
  });

  it('says how to install from a checkout when this build ships no wheel to offer', async () => {
    vscode.config.interpreter = fakePython([3, 15, 0]);
    const { server } = controller(extensionDir(['cp311'], false));
    await server.restart();
    expect(vscode.window.showWarningMessage).toHaveBeenCalledWith(expect.stringContaining('from a checkout'));
    expect(vscode.window.showWarningMessage).not.toHaveBeenCalledWith(
      expect.anything(),
      'Install with pip',
      'Select Interpreter',
    );
    expect(vscode.updates).toEqual([]);
  });

  it('never offers pip in an untrusted workspace', async () => {
    vscode.workspace.isTrusted = false;
    vscode.config.interpreter = fakePython([3, 15, 0]);
    const { server, status } = controller();
    await server.restart();
    expect(status.state).toBe('error');
    expect(vscode.window.showWarningMessage).not.toHaveBeenCalled();
  });

  it('uses the environment torchlint without needing a bundle', async () => {
    vscode.config.interpreter = fakePython([3, 15, 0]);
    vscode.config.importStrategy = 'fromEnvironment';
    const { server } = controller(extensionDir([]));
    await server.restart();
    expect(clients[0].serverOptions.args.slice(1)).toEqual(['-m', 'torchlint', 'server']);
  });

  it('reports a server that fails to start', async () => {
    vscode.config.interpreter = fakePython([3, 11, 0]);
    vscode.config.importStrategy = 'fromEnvironment';
    LanguageClient.failStart = new Error('No module named torchlint');
    const { server, status } = controller();
    await server.restart();
    expect(status.state).toBe('error');
    expect(server.client).toBeUndefined();
    expect(vscode.window.showErrorMessage).toHaveBeenCalledWith(
      'The torchlint server failed to start: No module named torchlint',
      'Show Output',
    );
  });

  it('tells the running server that settings changed, and answers its question with the new ones', async () => {
    vscode.config.interpreter = fakePython([3, 11, 0]);
    const { server } = controller();
    await server.restart();
    vscode.config.select = ['TL6'];
    await server.notifySettingsChanged();
    expect(clients[0].sendNotification).toHaveBeenCalledWith('workspace/didChangeConfiguration', { settings: null });
    const configuration = clients[0].clientOptions.middleware.workspace.configuration;
    const [answer] = await configuration({ items: [{ section: 'torchlint', scopeUri: 'file:///ws' }] }, undefined, async () => [null]);
    expect(answer.select).toEqual(['TL6']);
  });
});

describe('ServerController in a multi-root workspace', () => {
  beforeEach(() => {
    vscode.workspace.workspaceFolders = [vscode.folder('/repo/sub', 0), vscode.folder('/repo', 1), vscode.folder('/other', 2)];
  });

  it('starts one server on the project root: its interpreter, its working directory', async () => {
    vscode.folderConfig['/repo'] = { interpreter: fakePython([3, 11, 7]) };
    vscode.folderConfig['/repo/sub'] = { interpreter: ['/no/such/python'] };
    const { server, status } = controller();
    await server.restart();
    expect(clients).toHaveLength(1);
    expect(clients[0].serverOptions.command).toBe('sh');
    expect(clients[0].serverOptions.options.cwd).toBe('/repo');
    expect(status.state).toBe('running');
  });

  it('answers workspace/configuration for each folder with that folder\'s settings', async () => {
    vscode.config.interpreter = fakePython([3, 11, 2]);
    vscode.config.ignore = ['TL201'];
    vscode.folderConfig['/other'] = { severity: { TL601: 'error' }, ignore: ['TL105'] };
    const { server } = controller();
    await server.restart();
    const configuration = clients[0].clientOptions.middleware.workspace.configuration;
    const [other, repo, window] = await configuration(
      { items: [{ section: 'torchlint', scopeUri: 'file:///other' }, { section: 'torchlint', scopeUri: 'file:///repo' }, { section: 'torchlint' }] },
      undefined,
      async () => [null, null, null],
    );
    expect(other).toMatchObject({ severity: { TL601: 'error' }, ignore: ['TL105'] });
    expect(repo).toMatchObject({ severity: {}, ignore: ['TL201'] });
    expect(window).toMatchObject({ severity: {}, ignore: ['TL201'] });
    expect(clients[0].clientOptions.initializationOptions.settings).toEqual(window);
  });

  it('expands ${workspaceFolder} to the folder of the scope', async () => {
    const { server } = controller();
    vscode.config.args = ['--log-file', '${workspaceFolder}/torchlint.log'];
    expect(server.settings(vscode.Uri.file('/other/train.py')).args).toEqual(['--log-file', '/other/torchlint.log']);
    expect(server.settings().args).toEqual(['--log-file', '/repo/torchlint.log']);
  });

  it('runs while any folder enables torchlint, and not when none does', async () => {
    vscode.config.interpreter = fakePython([3, 11, 2]);
    vscode.config.enable = false;
    vscode.folderConfig['/other'] = { enable: true };
    const { server, status } = controller();
    await server.restart();
    expect(status.state).toBe('running');
    vscode.folderConfig['/other'] = { enable: false };
    await server.restart();
    expect(status.state).toBe('disabled');
  });

  it('restarts when a folder change moves the project root, not otherwise', async () => {
    vscode.config.interpreter = fakePython([3, 11, 2]);
    const { server } = controller();
    await server.restart();
    vscode.workspace.workspaceFolders = [...vscode.workspace.workspaceFolders!, vscode.folder('/third', 3)];
    await server.foldersChanged();
    expect(clients).toHaveLength(1);
    vscode.workspace.workspaceFolders = [vscode.folder('/other', 0), vscode.folder('/repo', 1)];
    await server.foldersChanged();
    expect(clients).toHaveLength(2);
    expect(clients[1].serverOptions.options.cwd).toBe('/other');
  });
});
