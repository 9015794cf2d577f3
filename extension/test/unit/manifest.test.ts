/** package.json is the one source of command ids and settings: the code, the server and it agree. */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { MANIFEST_MODULE, PACKAGE_JSON, render } from '../../scripts/manifest.mjs';
import * as vscode from './vscode.mock';

vi.mock('../../src/pythonExtension', () => ({
  activeInterpreter: async () => undefined,
  onInterpreterChange: async () => undefined,
  hasPythonExtension: () => false,
}));

const { activate } = await import('../../src/extension');
const { SERVER_COMMAND, SERVER_PROVIDED } = await import('../../src/commands');
const { LANGUAGE_CLIENT_SETTINGS, readSettings } = await import('../../src/settings');
const { serverCommand } = await import('../../src/serverCommand');

const pkg = JSON.parse(fs.readFileSync(PACKAGE_JSON, 'utf8'));
const contributedCommands: string[] = pkg.contributes.commands.map((c: { command: string }) => c.command);
const declaredSettings = Object.keys(pkg.contributes.configuration.properties);

/** Activates the extension against the fake `vscode` with torchlint off, so no server starts. */
async function activated() {
  vscode.config.enable = false;
  const context = {
    extensionPath: fs.mkdtempSync(path.join(os.tmpdir(), 'torchlint-ext-')),
    subscriptions: [],
    workspaceState: vscode.memento(),
  };
  await activate(context as never);
  return context;
}

beforeEach(() => vscode.resetVscode());

describe('src/manifest.ts', () => {
  it('is what scripts/manifest.mjs makes of package.json (run `npm run manifest`)', () => {
    expect(fs.readFileSync(MANIFEST_MODULE, 'utf8')).toBe(render(pkg));
  });
});

describe('commands', () => {
  it('the extension registers every contributed command the server does not provide, and no other', async () => {
    await activated();
    const registered = vscode.commands.registerCommand.mock.calls.map(([id]) => id);
    const provided: readonly string[] = SERVER_PROVIDED;
    expect([...registered].sort()).toEqual(contributedCommands.filter((c) => !provided.includes(c)).sort());
  });

  it('the server provides the contributed commands left to it and the ones the client sends, and only those', async () => {
    const defaults = readSettings({ get: (_key, fallback) => fallback }, { trusted: true });
    const cmd = serverCommand({ ...defaults, importStrategy: 'fromEnvironment' }, ['python3'], '');
    const capabilities = await initialize(cmd.command, cmd.args);
    const expected = [...SERVER_PROVIDED, ...Object.values(SERVER_COMMAND)];
    expect([...(capabilities.executeCommandProvider?.commands ?? [])].sort()).toEqual(expected.sort());
  }, 30_000);

  it('every torchlint context key in a `when` clause is one the extension sets', async () => {
    await activated();
    const set = new Set(
      vscode.commands.executeCommand.mock.calls.filter(([name]) => name === 'setContext').map(([, key]) => key),
    );
    const whens = JSON.stringify(pkg.contributes.menus).match(/\btorchlint\.\w+/g) ?? [];
    const keys = whens.filter((k) => !contributedCommands.includes(k));
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(set, key).toContain(key);
  });
});

describe('settings', () => {
  it('every setting the extension reads is declared, and every declared one is read by it or the language client', async () => {
    await activated();
    const read = [...vscode.reads].map((k) => `torchlint.${k}`);
    const byClient = LANGUAGE_CLIENT_SETTINGS.map((k) => `torchlint.${k}`);
    for (const key of read) expect(declaredSettings, key).toContain(key);
    expect([...new Set([...read, ...byClient])].sort()).toEqual([...declaredSettings].sort());
  });
});

/** Starts a server, sends `initialize` and returns its capabilities. */
function initialize(command: string, args: string[]): Promise<{ executeCommandProvider?: { commands: string[] } }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    let buffer = Buffer.alloc(0);
    child.on('error', reject);
    child.stdout.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      const end = buffer.indexOf('\r\n\r\n');
      const length = Number(/Content-Length: (\d+)/i.exec(buffer.subarray(0, end).toString())?.[1]);
      if (end < 0 || buffer.length < end + 4 + length) return;
      const message = JSON.parse(buffer.subarray(end + 4, end + 4 + length).toString());
      child.kill();
      if (message.error) reject(new Error(JSON.stringify(message.error)));
      else resolve(message.result.capabilities);
    });
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { processId: null, rootUri: null, capabilities: {} },
    });
    child.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  });
}
