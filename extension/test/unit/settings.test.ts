import { describe, expect, it } from 'vitest';
import { type ConfigReader, expandVariables, readSettings } from '../../src/settings';

function reader(values: Record<string, unknown>): ConfigReader {
  return { get: <T>(key: string, fallback: T) => (key in values ? (values[key] as T) : fallback) };
}

const trusted = { trusted: true, workspaceFolder: '/ws', env: { HOME: '/home/me', VENV: '/opt/venv' } };

describe('readSettings', () => {
  it('has the documented defaults', () => {
    expect(readSettings(reader({}), trusted)).toEqual({
      enable: true,
      interpreter: [],
      importStrategy: 'useBundled',
      args: [],
      lintOnChange: true,
      showSyntaxErrors: true,
      severity: {},
      select: [],
      ignore: [],
      probe: { enabled: false, timeoutSeconds: 60, maxSteps: 20 },
    });
  });

  it('normalises codes and severities and drops values it does not understand', () => {
    const s = readSettings(
      reader({
        importStrategy: 'fromSomewhere',
        select: [' tl1 ', '', 42],
        ignore: ['tl601'],
        severity: { tl601: 'ERROR', TL101: 'loud', TL201: 'off' },
        'probe.timeoutSeconds': 0.5,
        'probe.maxSteps': 2.7,
      }),
      trusted,
    );
    expect(s.importStrategy).toBe('useBundled');
    expect(s.select).toEqual(['TL1']);
    expect(s.ignore).toEqual(['TL601']);
    expect(s.severity).toEqual({ TL601: 'error', TL201: 'off' });
    expect(s.probe).toEqual({ enabled: false, timeoutSeconds: 60, maxSteps: 2 });
  });

  it('keeps the defaults for values of the wrong type', () => {
    const s = readSettings(
      reader({ enable: 'no', severity: 'TL601', interpreter: 'python3', 'probe.enabled': 1, 'probe.maxSteps': '5' }),
      trusted,
    );
    expect(s.enable).toBe(true);
    expect(s.severity).toEqual({});
    expect(s.interpreter).toEqual([]);
    expect(s.probe).toEqual({ enabled: false, timeoutSeconds: 60, maxSteps: 20 });
  });

  it('expands variables in the interpreter and arguments', () => {
    const s = readSettings(
      reader({ interpreter: ['${workspaceFolder}/.venv/bin/python'], args: ['--log=${env:VENV}/x', '${userHome}'] }),
      trusted,
    );
    expect(s.interpreter).toEqual(['/ws/.venv/bin/python']);
    expect(s.args).toEqual(['--log=/opt/venv/x', '/home/me']);
  });

  it('in an untrusted workspace runs only the bundled server and never the probe', () => {
    const s = readSettings(
      reader({ importStrategy: 'fromEnvironment', 'probe.enabled': true }),
      { ...trusted, trusted: false },
    );
    expect(s.importStrategy).toBe('useBundled');
    expect(s.probe.enabled).toBe(false);
  });
});

describe('expandVariables', () => {
  it('leaves ${workspaceFolder} alone without a folder and empties unknown env vars', () => {
    expect(expandVariables('${workspaceFolder}/a:${env:NOPE}', { trusted: true, env: {} })).toBe('${workspaceFolder}/a:');
  });
});
