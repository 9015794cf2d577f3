/** Which Python runs the server, and whether it can. */
import { execFile } from 'node:child_process';

export const MIN_PYTHON: readonly [number, number] = [3, 10];

export type InterpreterSource = 'setting' | 'python-extension' | 'path';

export interface Interpreter {
  /** Command line that starts Python, e.g. ["/venv/bin/python"] or ["py", "-3.11"]. */
  command: string[];
  source: InterpreterSource;
}

export interface PythonInfo {
  version: [number, number, number];
  executable: string;
}

/** The `torchlint.interpreter` setting wins, then the Python extension's choice, then PATH. */
export function chooseInterpreter(
  setting: string[],
  fromPythonExtension: string[] | undefined,
  platform: NodeJS.Platform,
): Interpreter {
  if (setting.length > 0) return { command: setting, source: 'setting' };
  if (fromPythonExtension && fromPythonExtension.length > 0) {
    return { command: fromPythonExtension, source: 'python-extension' };
  }
  return { command: [platform === 'win32' ? 'python' : 'python3'], source: 'path' };
}

const INFO_SCRIPT = 'import json, sys; print(json.dumps({"version": list(sys.version_info[:3]), "executable": sys.executable}))';

/** Parses what INFO_SCRIPT printed; throws with the output when it is not that. */
export function parsePythonInfo(stdout: string): PythonInfo {
  const line = stdout.trim().split(/\r?\n/).pop() ?? '';
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch {
    throw new Error(`unexpected output from Python: ${JSON.stringify(stdout.slice(0, 200))}`);
  }
  const { version, executable } = data as { version?: unknown; executable?: unknown };
  if (!Array.isArray(version) || version.length !== 3 || !version.every((n) => Number.isInteger(n))) {
    throw new Error(`unexpected output from Python: ${JSON.stringify(line)}`);
  }
  return { version: version as [number, number, number], executable: String(executable ?? '') };
}

/** A message for the user when this Python cannot run torchlint, else undefined. */
export function versionProblem(info: PythonInfo): string | undefined {
  const [major, minor] = info.version;
  if (major > MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor >= MIN_PYTHON[1])) return undefined;
  return `torchlint needs Python ${MIN_PYTHON.join('.')} or newer, but ${info.executable || 'the selected interpreter'} is Python ${info.version.join('.')}.`;
}

/** Runs the interpreter once to learn its version; rejects with a readable reason. */
export function inspectPython(command: string[], timeoutMs = 15000): Promise<PythonInfo> {
  const [exe, ...pre] = command;
  return new Promise((resolve, reject) => {
    execFile(exe, [...pre, '-c', INFO_SCRIPT], { timeout: timeoutMs, windowsHide: true }, (err, stdout, stderr) => {
      if (err) {
        const code = (err as NodeJS.ErrnoException).code;
        const why = code === 'ENOENT' ? 'was not found' : `failed: ${(stderr || err.message).trim().slice(0, 300)}`;
        reject(new Error(`Python interpreter \`${command.join(' ')}\` ${why}.`));
        return;
      }
      try {
        resolve(parsePythonInfo(stdout));
      } catch (e) {
        reject(e);
      }
    });
  });
}
