/** Turns settings and an interpreter into the command line that starts `torchlint server`. */
import * as path from 'node:path';
import type { PythonInfo } from './interpreter';
import type { Settings } from './settings';

export interface ServerCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** Folder of the bundled libraries for this Python (CPython ABI tag), e.g. bundled/libs/cp311. */
export function bundledLibs(extensionPath: string, info: PythonInfo): string {
  return path.join(extensionPath, 'bundled', 'libs', `cp${info.version[0]}${info.version[1]}`);
}

export function serverCommand(
  settings: Settings,
  interpreter: string[],
  extensionPath: string,
): ServerCommand {
  const [command, ...pre] = interpreter;
  const launch =
    settings.importStrategy === 'useBundled'
      ? [path.join(extensionPath, 'bundled', 'tool', 'server.py')]
      : ['-m', 'torchlint', 'server'];
  return {
    command,
    args: [...pre, ...launch, ...settings.args],
    // Unbuffered stdio for the JSON-RPC stream; UTF-8 whatever the locale.
    env: { PYTHONUNBUFFERED: '1', PYTHONIOENCODING: 'utf-8' },
  };
}

/**
 * What the server reads from `initializationOptions` and `workspace/configuration`
 * (section `torchlint`): our settings in the server's vocabulary.
 */
export function serverSettings(settings: Settings, interpreter: string | undefined): Record<string, unknown> {
  const severity: Record<string, string> = {};
  const off: string[] = [];
  for (const [code, level] of Object.entries(settings.severity)) {
    if (level === 'off') off.push(code);
    else severity[code] = level;
  }
  return {
    enable: settings.enable,
    // null: the project's configuration decides which rules run.
    select: settings.select.length > 0 ? settings.select : null,
    ignore: [...settings.ignore, ...off.filter((c) => !settings.ignore.includes(c))],
    severity,
    run: settings.lintOnChange ? 'onType' : 'onSave',
    showSyntaxErrors: settings.showSyntaxErrors,
    interpreter,
    probe: settings.probe,
  };
}
