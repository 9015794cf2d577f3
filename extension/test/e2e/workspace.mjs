// The fixture workspace the end-to-end tests open, and the user settings around it.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EXTENSION_ROOT } from './codeServer.mjs';

/** The Python on PATH (CI puts the torchlint test venv first). */
export function pythonOnPath() {
  return execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
}

export function userSettings(extra = {}) {
  return {
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'extensions.ignoreRecommendations': true,
    'security.workspace.trust.enabled': false,
    'chat.disableAIFeatures': true,
    'torchlint.interpreter': [pythonOnPath()],
    ...extra,
  };
}

/** A scratch copy of test/fixtures/<name> in `root` (the tests edit its files). */
export function workspaceCopy(root, name = 'workspace') {
  const dest = path.join(root, name);
  fs.cpSync(path.join(EXTENSION_ROOT, 'test', 'fixtures', name), dest, { recursive: true });
  return dest;
}
