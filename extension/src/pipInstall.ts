/** With the user's consent, installs torchlint into their interpreter when the bundled one cannot run. */
import { execFile } from 'node:child_process';
import * as vscode from 'vscode';
import { COMMAND, SECTION, type SettingKey } from './manifest';

export const PIP_REQUIREMENT = 'torchlint[server]';

export function pipArgs(interpreter: string[]): { command: string; args: string[] } {
  const [command, ...pre] = interpreter;
  return { command, args: [...pre, '-m', 'pip', 'install', '--upgrade', PIP_REQUIREMENT] };
}

/**
 * Asks, installs, and switches `torchlint.importStrategy` to `fromEnvironment`.
 * Resolves true when torchlint was installed and the setting changed.
 */
export async function offerPipInstall(
  interpreter: string[],
  reason: string,
  log: vscode.LogOutputChannel,
): Promise<boolean> {
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
  const { command, args } = pipArgs(interpreter);
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
