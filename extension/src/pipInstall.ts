/**
 * With the user's consent, installs torchlint into their interpreter when the bundled one cannot run:
 * from the wheel the extension ships (torchlint is not on a package index), its dependencies from pip's index.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as vscode from 'vscode';
import { COMMAND, SECTION, type SettingKey } from './manifest';

export const PIP_REQUIREMENT = 'torchlint[server]';

/** The torchlint wheel shipped in bundled/wheel (scripts/bundle-python.sh), if this build has one. */
export function bundledWheel(extensionPath: string): string | undefined {
  const dir = path.join(extensionPath, 'bundled', 'wheel');
  const name = fs.existsSync(dir) ? fs.readdirSync(dir).find((f) => /^torchlint-.*\.whl$/.test(f)) : undefined;
  return name ? path.join(dir, name) : undefined;
}

export function pipArgs(interpreter: string[], wheel: string): { command: string; args: string[] } {
  const [command, ...pre] = interpreter;
  const requirement = `${PIP_REQUIREMENT} @ ${pathToFileURL(wheel).href}`;
  return { command, args: [...pre, '-m', 'pip', 'install', '--upgrade', requirement] };
}

/**
 * Asks, installs, and switches `torchlint.importStrategy` to `fromEnvironment`.
 * Resolves true when torchlint was installed and the setting changed.
 */
export async function offerPipInstall(
  interpreter: string[],
  reason: string,
  log: vscode.LogOutputChannel,
  extensionPath: string,
): Promise<boolean> {
  const wheel = bundledWheel(extensionPath);
  if (wheel === undefined) {
    log.warn('this build of the extension ships no torchlint wheel: nothing to offer to pip');
    void vscode.window.showWarningMessage(
      `${reason} Install torchlint into \`${interpreter.join(' ')}\` from a checkout ` +
        '(`pip install "<checkout>[server]"`) and set `torchlint.importStrategy` to `fromEnvironment`.',
    );
    return false;
  }
  const install = `Install with pip`;
  const choice = await vscode.window.showWarningMessage(
    `${reason} Install ${PIP_REQUIREMENT} into \`${interpreter.join(' ')}\` with pip and use it?`,
    install,
    'Select Interpreter',
  );
  if (choice === 'Select Interpreter') {
    await vscode.commands.executeCommand(COMMAND.selectInterpreter);
    return false;
  }
  if (choice !== install) return false;
  const { command, args } = pipArgs(interpreter, wheel);
  log.info(`running: ${command} ${args.join(' ')}`);
  const ok = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Installing ${PIP_REQUIREMENT}…` },
    () =>
      new Promise<boolean>((resolve) => {
        execFile(command, args, { timeout: 10 * 60 * 1000, windowsHide: true }, (err, stdout, stderr) => {
          log.info(stdout);
          if (err) {
            log.error(`pip install failed: ${stderr || err.message}`);
            resolve(false);
          } else {
            resolve(true);
          }
        });
      }),
  );
  if (!ok) {
    const show = 'Show Output';
    if ((await vscode.window.showErrorMessage(`pip could not install ${PIP_REQUIREMENT}.`, show)) === show) log.show();
    return false;
  }
  const target = vscode.workspace.workspaceFolders?.length
    ? vscode.ConfigurationTarget.Workspace
    : vscode.ConfigurationTarget.Global;
  await vscode.workspace
    .getConfiguration(SECTION)
    .update('importStrategy' satisfies SettingKey, 'fromEnvironment', target);
  return true;
}
