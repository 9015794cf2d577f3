import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bundledWheel, pipArgs } from '../../src/pipInstall';

describe('bundledWheel', () => {
  it('finds the wheel scripts/bundle-python.sh ships, and nothing in a build without one', () => {
    const ext = fs.mkdtempSync(path.join(os.tmpdir(), 'torchlint-ext-'));
    expect(bundledWheel(ext)).toBeUndefined();
    fs.mkdirSync(path.join(ext, 'bundled', 'wheel'), { recursive: true });
    fs.writeFileSync(path.join(ext, 'bundled', 'wheel', 'README'), '');
    expect(bundledWheel(ext)).toBeUndefined();
    const wheel = path.join(ext, 'bundled', 'wheel', 'torchlint-0.2.0-py3-none-any.whl');
    fs.writeFileSync(wheel, '');
    expect(bundledWheel(ext)).toBe(wheel);
  });
});

describe('pipArgs', () => {
  it('installs the shipped wheel with the server extra, keeping interpreter arguments', () => {
    const wheel = path.join(os.tmpdir(), 'torchlint-0.2.0-py3-none-any.whl');
    const { command, args } = pipArgs(['py', '-3.11'], wheel);
    expect(command).toBe('py');
    expect(args).toEqual(['-3.11', '-m', 'pip', 'install', '--upgrade', `torchlint[server] @ ${pathToFileURL(wheel).href}`]);
  });
});
