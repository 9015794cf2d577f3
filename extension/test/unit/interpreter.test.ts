import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chooseInterpreter, inspectPython, parsePythonInfo, versionProblem } from '../../src/interpreter';

/** A fake "python" that prints what INFO_SCRIPT would, for any version. */
function fakePython(version: number[]): string[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'torchlint-py-'));
  const script = path.join(dir, 'python.sh');
  fs.writeFileSync(script, `echo '{"version": ${JSON.stringify(version)}, "executable": "/fake/python"}'\n`);
  return ['sh', script];
}

describe('chooseInterpreter', () => {
  it('prefers the torchlint.interpreter setting', () => {
    expect(chooseInterpreter(['/a/python'], ['/b/python'], 'linux')).toEqual({ command: ['/a/python'], source: 'setting' });
  });
  it('then the Python extension', () => {
    expect(chooseInterpreter([], ['/b/python'], 'linux')).toEqual({ command: ['/b/python'], source: 'python-extension' });
  });
  it('then python3 on PATH (python on Windows)', () => {
    expect(chooseInterpreter([], undefined, 'linux')).toEqual({ command: ['python3'], source: 'path' });
    expect(chooseInterpreter([], [], 'win32').command).toEqual(['python']);
  });
});

describe('parsePythonInfo', () => {
  it('reads the last line', () => {
    expect(parsePythonInfo('noise\n{"version": [3, 11, 4], "executable": "/x"}\n')).toEqual({
      version: [3, 11, 4],
      executable: '/x',
    });
  });
  it('rejects anything else with the output in the message', () => {
    expect(() => parsePythonInfo('Python was not found; run without arguments')).toThrow(/Python was not found/);
    expect(() => parsePythonInfo('{"version": "3.11"}')).toThrow(/unexpected output/);
  });
});

describe('versionProblem', () => {
  it('accepts 3.10 and newer', () => {
    expect(versionProblem({ version: [3, 10, 0], executable: '/p' })).toBeUndefined();
    expect(versionProblem({ version: [3, 14, 1], executable: '/p' })).toBeUndefined();
  });
  it('explains what is too old', () => {
    expect(versionProblem({ version: [3, 8, 10], executable: '/usr/bin/python3' })).toBe(
      'torchlint needs Python 3.10 or newer, but /usr/bin/python3 is Python 3.8.10.',
    );
  });
});

describe('inspectPython', () => {
  it('asks a real interpreter for its version', async () => {
    const info = await inspectPython(['python3']);
    expect(info.version[0]).toBe(3);
    expect(path.isAbsolute(info.executable)).toBe(true);
  });
  it('passes the interpreter command line through', async () => {
    expect(await inspectPython(fakePython([3, 9, 1]))).toEqual({ version: [3, 9, 1], executable: '/fake/python' });
  });
  it('says when the interpreter does not exist', async () => {
    await expect(inspectPython(['/no/such/python'])).rejects.toThrow('Python interpreter `/no/such/python` was not found.');
  });
  it('says when the interpreter fails', async () => {
    await expect(inspectPython(['sh', '-c', 'echo broken >&2; exit 3'])).rejects.toThrow(/failed: broken/);
  });
});
