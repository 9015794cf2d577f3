import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundledLibs, serverCommand, serverSettings } from '../../src/serverCommand';
import { readSettings, type Settings } from '../../src/settings';

function settings(values: Record<string, unknown> = {}): Settings {
  return readSettings({ get: <T>(k: string, d: T) => (k in values ? (values[k] as T) : d) }, { trusted: true });
}

describe('serverCommand', () => {
  it('runs the bundled launcher by default, with the user arguments last', () => {
    const cmd = serverCommand(settings({ args: ['--log-level', 'debug'] }), ['/venv/bin/python'], '/ext');
    expect(cmd.command).toBe('/venv/bin/python');
    expect(cmd.args).toEqual([path.join('/ext', 'bundled', 'tool', 'server.py'), '--log-level', 'debug']);
    expect(cmd.env.PYTHONUNBUFFERED).toBe('1');
  });
  it('runs the environment torchlint with fromEnvironment, keeping interpreter arguments', () => {
    const cmd = serverCommand(settings({ importStrategy: 'fromEnvironment' }), ['py', '-3.11'], '/ext');
    expect([cmd.command, ...cmd.args]).toEqual(['py', '-3.11', '-m', 'torchlint', 'server']);
  });
});

describe('bundledLibs', () => {
  it('is keyed by the CPython version', () => {
    expect(bundledLibs('/ext', { version: [3, 12, 1], executable: '' })).toBe(path.join('/ext', 'bundled', 'libs', 'cp312'));
  });
});

describe('serverSettings', () => {
  it('lets the project configuration decide by default', () => {
    expect(serverSettings(settings(), '/py')).toEqual({
      enable: true,
      select: null,
      ignore: [],
      severity: {},
      run: 'onType',
      showSyntaxErrors: true,
      interpreter: '/py',
      probe: { enabled: false, timeoutSeconds: 60, maxSteps: 20 },
    });
  });
  it('turns severity "off" into an ignore and lintOnChange off into onSave', () => {
    const s = serverSettings(
      settings({ select: ['TL1', 'TL6'], ignore: ['TL201'], severity: { TL601: 'error', TL201: 'off', TL101: 'off' }, lintOnChange: false }),
      undefined,
    );
    expect(s.select).toEqual(['TL1', 'TL6']);
    expect(s.ignore).toEqual(['TL201', 'TL101']);
    expect(s.severity).toEqual({ TL601: 'error' });
    expect(s.run).toBe('onSave');
  });
});
