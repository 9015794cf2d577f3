// UI smoke test: installs the built .vsix into code-server, opens a 3,000-line script
// in headless Chromium and sees "torchlint: analysing" in the status bar during the
// first lint, opens a buggy file, checks the Problems panel lists the finding, applies
// the quick fix from the keyboard (Ctrl+. then Enter) and saves screenshots in out/e2e/ui/.
//   node test/e2e/runUi.mjs [path/to/torchlint.vsix]
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  codeServerEntry,
  EXTENSION_ROOT,
  installExtension,
  launchBrowser,
  makeProfile,
  startCodeServer,
  tempRoot,
} from './codeServer.mjs';
import { userSettings, workspaceCopy } from './workspace.mjs';

const vsix = path.resolve(process.argv[2] ?? path.join(EXTENSION_ROOT, 'dist', 'torchlint-linux-x64.vsix'));
const outDir = path.join(EXTENSION_ROOT, 'out', 'e2e', 'ui');
fs.rmSync(outDir, { recursive: true, force: true });
fs.mkdirSync(outDir, { recursive: true });

const root = tempRoot('ui');
const entry = codeServerEntry();
// The default importStrategy: the server bundled in the .vsix runs.
const profile = makeProfile(root, userSettings({ 'workbench.colorTheme': 'Default Dark Modern' }));
const workspace = workspaceCopy(root);
// A 3,000-line training script opened first: its first lint lasts well beyond the 150 ms VS Code
// waits before it shows a window progress, so "torchlint: analysing" has time to appear.
const block = (i) =>
  `\n\nclass Block${i}(nn.Module):\n    def __init__(self):\n        super().__init__()\n` +
  `        self.fc = nn.Linear(64, 64)\n\n    def forward(self, x):\n        return torch.relu(self.fc(x)) + x\n\n\n` +
  `def train_${i}(loader):\n    model = Block${i}()\n    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)\n` +
  `    for x, y in loader:\n        opt.zero_grad()\n        loss = nn.functional.mse_loss(model(x), y)\n` +
  `        loss.backward()\n        opt.step()\n    return model\n`;
let big = 'import torch\nfrom torch import nn\n';
for (let i = 0; big.split('\n').length < 3000; i++) big += block(i);
fs.writeFileSync(path.join(workspace, 'long_script.py'), big);
const checks = [];
async function check(name, body) {
  try {
    await body();
    checks.push({ name, ok: true });
    console.log(`ok   ${name}`);
  } catch (err) {
    checks.push({ name, ok: false });
    console.log(`FAIL ${name}\n${err?.stack ?? err}`);
    throw err;
  }
}

let server;
let browser;
let page;
try {
  await check('the .vsix installs into code-server', async () => {
    installExtension(entry, profile, vsix);
    const installed = fs.readdirSync(profile.extensions).filter((d) => d.startsWith('torchlint.torchlint-'));
    if (installed.length !== 1) throw new Error(`expected one installed torchlint, found ${installed}`);
  });
  server = await startCodeServer(entry, profile, path.join(outDir, 'code-server.log'));
  browser = await launchBrowser(root);
  page = browser.pages()[0] ?? (await browser.newPage());
  page.setDefaultTimeout(90_000); // a loaded 2-core CI machine is slow to start VS Code
  // Every text the status bar's progress item shows, kept as it changes: the first lint's
  // "torchlint: analysing" lasts only as long as that lint (a second or two on a quiet machine).
  await page.addInitScript(() => {
    const seen = (window.__torchlintProgress = []);
    const watch = () => {
      const text = document.getElementById('status.progress')?.textContent?.trim();
      if (text && seen[seen.length - 1] !== text) seen.push(text);
    };
    new MutationObserver(watch).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
  });
  await page.goto(`${server.url}/?folder=${encodeURIComponent(workspace)}`);
  await page.locator('.monaco-workbench').waitFor({ timeout: 120_000 });

  /** Opens `name` through Quick Open and waits for `text` in the editor. */
  async function quickOpen(name, text) {
    await page.keyboard.press('Control+P');
    await page.locator('.quick-input-widget input').waitFor();
    await page.keyboard.type(name);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor();
    await page.keyboard.press('Enter');
    await page.locator('.monaco-editor .view-lines', { hasText: text }).waitFor();
  }

  await check('the status bar says "torchlint: analysing" while the first lint runs', async () => {
    await page.locator('.explorer-folders-view').waitFor({ timeout: 60_000 });
    await quickOpen('long_script.py', 'from torch import nn');
    const analysing = () => window.__torchlintProgress.some((text) => text.includes('torchlint: analysing'));
    try {
      await page.waitForFunction(analysing, null, { timeout: 120_000 });
    } finally {
      console.log(`     status bar progress texts: ${JSON.stringify(await page.evaluate(() => window.__torchlintProgress))}`);
    }
    await page.screenshot({ path: path.join(outDir, 'analysing.png') });
    await page.locator('[id="status.progress"]', { hasText: 'torchlint: analysing' }).waitFor({ state: 'detached', timeout: 120_000 });
  });

  await check('the Problems panel lists TL101 for train.py', async () => {
    await quickOpen('train.py', 'loss.backward()');
    await page.keyboard.press('Control+Shift+M');
    const row = page.locator('.markers-panel .monaco-list-row', { hasText: 'TL101' });
    await row.first().waitFor({ timeout: 120_000 });
    await page.locator('.monaco-editor .squiggly-warning, .monaco-editor .squiggly-error').first().waitFor();
    await page.screenshot({ path: path.join(outDir, 'problems.png') });
  });

  await check('the quick fix from the keyboard clears it', async () => {
    await page.keyboard.press('Control+1'); // focus the editor
    await page.keyboard.press('Control+G');
    await page.keyboard.type('8');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Control+.');
    const menu = page.locator('.action-widget');
    await menu.locator('.monaco-list-row', { hasText: 'zero_grad' }).first().waitFor();
    await page.screenshot({ path: path.join(outDir, 'quick-fix.png') });
    // The first entry is the fix (the noqa action comes after it).
    await page.keyboard.press('Enter');
    await page.locator('.monaco-editor .view-lines', { hasText: 'opt.zero_grad()' }).waitFor();
    await page.locator('.markers-panel .monaco-list-row', { hasText: 'TL101' }).waitFor({ state: 'detached', timeout: 60_000 });
    await page.screenshot({ path: path.join(outDir, 'fixed.png') });
  });
} catch {
  if (page) await page.screenshot({ path: path.join(outDir, 'failure.png') }).catch(() => undefined);
} finally {
  await browser?.close().catch(() => undefined);
  await server?.stop();
  fs.cpSync(path.join(profile.userData, 'logs'), path.join(outDir, 'logs'), { recursive: true });
  fs.rmSync(root, { recursive: true, force: true });
}
const passed = checks.filter((c) => c.ok).length;
const failed = checks.length - passed + (checks.length < 4 ? 4 - checks.length : 0);
console.log(`ui: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
