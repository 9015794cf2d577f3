import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

const LAUNCHER = path.resolve(__dirname, '..', '..', 'bundled', 'tool', 'server.py');

/** A copy of the launcher in an extension folder whose bundle holds `libs` (tag -> files). */
function extension(libs: Record<string, Record<string, string>>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'torchlint-launcher-'));
  fs.mkdirSync(path.join(root, 'bundled', 'tool'), { recursive: true });
  fs.copyFileSync(LAUNCHER, path.join(root, 'bundled', 'tool', 'server.py'));
  for (const [tag, files] of Object.entries(libs)) {
    for (const [name, text] of Object.entries(files)) {
      const file = path.join(root, 'bundled', 'libs', tag, name);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, text);
    }
  }
  return root;
}

const tag = spawnSync('python3', ['-c', 'import sys; print("cp%d%d" % sys.version_info[:2])'], { encoding: 'utf8' }).stdout.trim();

describe('bundled/tool/server.py', () => {
  it('puts the bundle for this Python first on sys.path and starts `torchlint server`', () => {
    // A stand-in torchlint that shows what it was called with and where it came from.
    const root = extension({
      [tag]: {
        'torchlint/__init__.py': '',
        'torchlint/cli.py': 'import sys\ndef main(argv):\n    print(argv, __file__)\n    return 7\n',
      },
    });
    const run = spawnSync('python3', [path.join(root, 'bundled', 'tool', 'server.py'), '--log-file', 'x'], { encoding: 'utf8' });
    expect(run.status).toBe(7);
    expect(run.stdout).toContain("['server', '--log-file', 'x']");
    expect(run.stdout).toContain(path.join(root, 'bundled', 'libs', tag, 'torchlint', 'cli.py'));
  });

  it('exits 3 with a clear message when the bundle has no build for this Python', () => {
    const root = extension({ cp29: { 'torchlint/__init__.py': '' } });
    const run = spawnSync('python3', [path.join(root, 'bundled', 'tool', 'server.py')], { encoding: 'utf8' });
    expect(run.status).toBe(3);
    expect(run.stderr).toMatch(/no bundled server for Python 3\.\d+ on \w+; set torchlint.importStrategy to fromEnvironment/);
  });
});
