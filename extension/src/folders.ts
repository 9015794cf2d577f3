/**
 * Multi-root workspaces. Like microsoft/vscode-python-tools-extension-template, one server serves the
 * window: its process (interpreter, import strategy, arguments, working directory) follows the
 * project root, while everything it lints with follows each file's own folder, which the server asks
 * for through `workspace/configuration` with that folder as `scopeUri`.
 */
import * as path from 'node:path';

export interface Folder {
  uri: { fsPath: string };
}

/**
 * The folder whose settings start the server: the first one (in the workspace's order, which the
 * user sets) that no other folder contains, so a repository opened with its subprojects wins.
 */
export function projectRoot<F extends Folder>(folders: readonly F[]): F | undefined {
  return folders.find((f) => !folders.some((other) => other !== f && contains(other.uri.fsPath, f.uri.fsPath)));
}

function contains(outer: string, inner: string): boolean {
  const rel = path.relative(outer, inner);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}
