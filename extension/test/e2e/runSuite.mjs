// Runs the mocha suite in dist/test/suite.js inside code-server's real extension
// host, with this folder as the extension under development. Prints one line per
// test and "N passed, N failed"; exits non-zero on any failure.
//   node test/e2e/runSuite.mjs [trusted|untrusted|multiroot]
// `untrusted` opens the workspace in restricted mode, with workspace settings
// that try to choose what runs, and runs only suite/untrusted.test.ts.
// `multiroot` opens a .code-workspace with two folders (test/fixtures/workspace
// and test/fixtures/second) and runs only suite/multiroot.test.ts.
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  codeServerEntry,
  EXTENSION_ROOT,
  launchBrowser,
  makeProfile,
  startCodeServer,
  tempRoot,
} from './codeServer.mjs';
import { userSettings, workspaceCopy } from './workspace.mjs';

const TIMEOUT_MS = Number(process.env.TORCHLINT_E2E_TIMEOUT_MS || 10 * 60_000);
const mode = process.argv[2] ?? 'trusted';
if (!['trusted', 'untrusted', 'multiroot'].includes(mode)) throw new Error(`unknown mode ${mode}`);
const untrusted = mode === 'untrusted';
const outDir = path.join(EXTENSION_ROOT, 'out', 'e2e', mode === 'trusted' ? 'suite' : mode);
fs.rmSync(outDir, { recursive: true, force: true });
fs.mkdirSync(outDir, { recursive: true });

const root = tempRoot('suite');
const entry = codeServerEntry();
const profile = makeProfile(
  root,
  untrusted
    ? userSettings({
        'torchlint.trace.server': 'verbose',
        'security.workspace.trust.enabled': true,
        'security.workspace.trust.startupPrompt': 'never',
        'security.workspace.trust.banner': 'never',
      })
    : // Start on the environment's torchlint; a test switches to the bundled one.
      userSettings({ 'torchlint.importStrategy': 'fromEnvironment', 'torchlint.trace.server': 'verbose' }),
);
const workspace = workspaceCopy(root);
// What the browser opens: the folder, or a multi-root workspace file.
let opened = `folder=${encodeURIComponent(workspace)}`;
if (mode === 'multiroot') {
  workspaceCopy(root, 'second');
  const file = path.join(root, 'torchlint.code-workspace');
  fs.writeFileSync(file, JSON.stringify({ folders: [{ path: 'workspace' }, { path: 'second' }] }));
  opened = `workspace=${encodeURIComponent(file)}`;
}
if (untrusted) {
  // What a hostile repository could ship; restricted mode must ignore all of it.
  fs.mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
  fs.writeFileSync(
    path.join(workspace, '.vscode', 'settings.json'),
    JSON.stringify({
      'torchlint.interpreter': [path.join(workspace, 'evil-python')],
      'torchlint.importStrategy': 'fromEnvironment',
      'torchlint.probe.enabled': true,
    }),
  );
}
const resultFile = path.join(outDir, 'results.json');
const server = await startCodeServer(entry, profile, path.join(outDir, 'code-server.log'), {
  TORCHLINT_E2E_RESULT: resultFile,
  TORCHLINT_E2E_SUITE: mode,
  TORCHLINT_E2E_SHOTS: outDir,
}, { trust: untrusted });
let browser;
let failed = 1;
try {
  browser = await launchBrowser(root);
  const page = browser.pages()[0] ?? (await browser.newPage());
  const consoleLog = fs.createWriteStream(path.join(outDir, 'browser-console.log'));
  page.on('console', (msg) => consoleLog.write(`[${msg.type()}] ${msg.text()}\n`));
  const remote = (p) => `vscode-remote://127.0.0.1:${server.port}${p}`;
  const payload = [
    ['extensionDevelopmentPath', remote(EXTENSION_ROOT)],
    ['extensionTestsPath', remote(path.join(EXTENSION_ROOT, 'dist', 'test', 'suite.js'))],
  ];
  const url = `${server.url}/?${opened}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
  await page.goto(url);
  const deadline = Date.now() + TIMEOUT_MS;
  while (!fs.existsSync(resultFile)) {
    if (Date.now() > deadline) throw new Error(`no test results after ${TIMEOUT_MS / 1000} s; see ${outDir}`);
    // A test asks for a screenshot of the window (suite/helpers.ts `screenshot`) with a request file.
    for (const request of fs.readdirSync(outDir).filter((f) => f.endsWith('.shot-request'))) {
      await page.screenshot({ path: path.join(outDir, request.replace(/\.shot-request$/, '.png')) });
      fs.rmSync(path.join(outDir, request));
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  await page.screenshot({ path: path.join(outDir, 'final.png') });
  const results = JSON.parse(fs.readFileSync(resultFile, 'utf8'));
  for (const r of results) {
    console.log(`${r.state === 'passed' ? 'ok  ' : 'FAIL'} ${r.title}${r.error ? `\n${r.error}` : ''}`);
  }
  const passed = results.filter((r) => r.state === 'passed').length;
  failed = results.length - passed;
  console.log(`e2e: ${passed} passed, ${failed} failed`);
  if (results.length === 0) failed = 1;
} finally {
  await browser?.close().catch(() => undefined);
  await server.stop();
  // The extension host's logs (with the LSP trace) outlive the scratch profile.
  fs.cpSync(path.join(profile.userData, 'logs'), path.join(outDir, 'logs'), { recursive: true });
  if (process.env.TORCHLINT_E2E_KEEP) console.log(`kept ${root}`);
  else fs.rmSync(root, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
