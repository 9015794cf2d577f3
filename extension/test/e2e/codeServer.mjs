// Runs code-server (VS Code's server build) on 127.0.0.1 in a throwaway profile,
// and a headless Chromium pointed at it.
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const EXTENSION_ROOT = path.resolve(HERE, '..', '..');

export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/** Path of code-server's entry script, installing it into the cache on first use. */
export function codeServerEntry() {
  return execFileSync('bash', [path.join(EXTENSION_ROOT, 'scripts', 'install-code-server.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** A fresh profile: user data (with `settings` as the user settings), extensions, config, XDG homes. */
export function makeProfile(root, settings) {
  const dirs = Object.fromEntries(
    ['userData', 'extensions', 'xdgConfig', 'xdgData'].map((name) => [name, path.join(root, name)]),
  );
  for (const dir of Object.values(dirs)) fs.mkdirSync(dir, { recursive: true });
  fs.mkdirSync(path.join(dirs.userData, 'User'), { recursive: true });
  fs.writeFileSync(path.join(dirs.userData, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
  dirs.config = path.join(root, 'config.yaml');
  fs.writeFileSync(dirs.config, 'auth: none\ncert: false\n');
  return dirs;
}

function profileArgs(profile) {
  return ['--user-data-dir', profile.userData, '--extensions-dir', profile.extensions, '--config', profile.config];
}

function profileEnv(profile, extra) {
  return { ...process.env, XDG_CONFIG_HOME: profile.xdgConfig, XDG_DATA_HOME: profile.xdgData, ...extra };
}

export function installExtension(entry, profile, vsix) {
  execFileSync(process.execPath, [entry, ...profileArgs(profile), '--install-extension', vsix], {
    env: profileEnv(profile, {}),
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

/**
 * Starts code-server in its own session (so its whole process group can be stopped).
 * Workspace trust is off unless `trust` is set.
 */
export async function startCodeServer(entry, profile, logFile, env = {}, { trust = false } = {}) {
  const port = await freePort();
  const log = fs.openSync(logFile, 'a');
  const child = spawn(
    process.execPath,
    [
      entry,
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--auth',
      'none',
      '--disable-telemetry',
      '--disable-update-check',
      ...(trust ? [] : ['--disable-workspace-trust']),
      '--disable-getting-started-override',
      ...profileArgs(profile),
    ],
    { env: profileEnv(profile, env), stdio: ['ignore', log, log], detached: true },
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`code-server exited with ${child.exitCode}; see ${logFile}`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`code-server did not answer within 60 s; see ${logFile}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    port,
    async stop() {
      for (const signal of ['SIGTERM', 'SIGKILL']) {
        try {
          process.kill(-child.pid, signal);
        } catch {
          return; // the group is gone
        }
        const until = Date.now() + 5000;
        while (Date.now() < until) {
          try {
            process.kill(-child.pid, 0);
          } catch {
            return;
          }
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    },
  };
}

export async function launchBrowser(root) {
  const executablePath = process.env.TORCHLINT_E2E_CHROMIUM || '/usr/bin/chromium';
  // launchPersistentContext gives Chromium our fresh --user-data-dir.
  return chromium.launchPersistentContext(path.join(root, 'chromium-profile'), {
    executablePath,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1400, height: 900 },
  });
}

export function tempRoot(name) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `torchlint-e2e-${name}-`));
}
