/**
 * Entry point the extension host calls (`extensionTestsPath`): runs the mocha
 * suites and writes one result per test to $TORCHLINT_E2E_RESULT, which the
 * driver outside the browser waits for.
 */
import * as fs from 'node:fs';

interface Result {
  title: string;
  state: 'passed' | 'failed';
  error?: string;
}

export async function run(): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Mocha = require('mocha') as typeof import('mocha');
  const mocha = new Mocha({ ui: 'tdd', timeout: 120_000, color: false, reporter: 'spec' });
  mocha.suite.emit('pre-require', globalThis, 'e2e', mocha);
  // Loaded after pre-require so that suite() and test() exist.
  if (process.env.TORCHLINT_E2E_SUITE === 'untrusted') {
    require('./untrusted.test');
  } else if (process.env.TORCHLINT_E2E_SUITE === 'multiroot') {
    require('./multiroot.test');
  } else {
    require('./python.test');
    require('./notebook.test');
    require('./client.test');
  }
  const results: Result[] = [];
  const failures = await new Promise<number>((resolve) => {
    mocha
      .run(resolve)
      .on('pass', (t) => results.push({ title: t.fullTitle(), state: 'passed' }))
      .on('fail', (t, err: Error) => results.push({ title: t.fullTitle(), state: 'failed', error: String(err?.stack ?? err) }));
  });
  const out = process.env.TORCHLINT_E2E_RESULT;
  if (out) fs.writeFileSync(out, JSON.stringify(results, null, 2));
  if (failures > 0) throw new Error(`${failures} end-to-end tests failed`);
}
