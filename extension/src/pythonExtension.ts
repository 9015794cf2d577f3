/** The interpreter selected in the Python extension, when that extension is installed. */
import { PythonExtension } from '@vscode/python-extension';
import * as vscode from 'vscode';

const PYTHON_EXTENSION_ID = 'ms-python.python';

export function hasPythonExtension(): boolean {
  return vscode.extensions.getExtension(PYTHON_EXTENSION_ID) !== undefined;
}

/** Command line of the active interpreter for `resource`, or undefined without the extension. */
export async function activeInterpreter(resource: vscode.Uri | undefined): Promise<string[] | undefined> {
  if (!hasPythonExtension()) return undefined;
  const api = await PythonExtension.api();
  const envPath = api.environments.getActiveEnvironmentPath(resource);
  const env = await api.environments.resolveEnvironment(envPath);
  const exe = env?.executable.uri?.fsPath;
  return exe ? [exe] : undefined;
}

/** Calls `listener` when the user picks another interpreter in the Python extension. */
export async function onInterpreterChange(listener: () => void): Promise<vscode.Disposable | undefined> {
  if (!hasPythonExtension()) return undefined;
  const api = await PythonExtension.api();
  return api.environments.onDidChangeActiveEnvironmentPath(() => listener());
}
