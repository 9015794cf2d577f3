import { describe, expect, it } from 'vitest';
import { SETTING } from '../../src/manifest';
import { configChangeAction, SerialRunner } from '../../src/restart';

describe('configChangeAction', () => {
  const affecting = (...changed: string[]) => (section: string) =>
    changed.some((c) => c === section || c.startsWith(`${section}.`));
  it('restarts for settings that change the process', () => {
    expect(configChangeAction(affecting('torchlint.interpreter'))).toBe('restart');
    expect(configChangeAction(affecting('torchlint.importStrategy'))).toBe('restart');
    expect(configChangeAction(affecting('torchlint.enable'))).toBe('restart');
  });
  it('notifies the running server for the rest', () => {
    expect(configChangeAction(affecting('torchlint.severity'))).toBe('notify');
    expect(configChangeAction(affecting('torchlint.probe.maxSteps'))).toBe('notify');
  });
  it('restarts or notifies for every setting package.json declares, except the trace', () => {
    const restarts = ['enable', 'interpreter', 'importStrategy', 'args'];
    for (const key of Object.keys(SETTING)) {
      const expected = key === 'trace.server' ? 'none' : restarts.includes(key) ? 'restart' : 'notify';
      expect(configChangeAction(affecting(`torchlint.${key}`)), key).toBe(expected);
    }
  });
  it('ignores other settings, and the trace the language client follows itself', () => {
    expect(configChangeAction(affecting('python.defaultInterpreterPath'))).toBe('none');
    expect(configChangeAction(affecting('torchlint.trace.server'))).toBe('none');
  });
});

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('SerialRunner', () => {
  it('coalesces requests made during a run into one more run', async () => {
    const gates = [deferred(), deferred(), deferred()];
    let runs = 0;
    let active = 0;
    let maxActive = 0;
    const runner = new SerialRunner(async () => {
      active++;
      maxActive = Math.max(maxActive, active);
      await gates[runs++].promise;
      active--;
    }, () => undefined);
    const first = runner.request();
    const second = runner.request();
    const third = runner.request();
    expect(second).toBe(first);
    expect(third).toBe(first);
    gates[0].resolve();
    gates[1].resolve();
    await first;
    expect(runs).toBe(2);
    expect(maxActive).toBe(1);
    gates[2].resolve();
    await runner.request();
    expect(runs).toBe(3);
  });

  it('reports a failed run and keeps serving requests', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const runner = new SerialRunner(async () => {
      if (calls++ === 0) throw new Error('boom');
    }, (e) => errors.push(e));
    await runner.request();
    await runner.request();
    expect(calls).toBe(2);
    expect(errors.map(String)).toEqual(['Error: boom']);
  });
});
