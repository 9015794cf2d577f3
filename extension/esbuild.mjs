// Bundles the extension (and, with --tests, the end-to-end suite) into dist/, after bringing
// src/manifest.ts up to date with package.json.
import * as esbuild from 'esbuild';
import { writeManifest } from './scripts/manifest.mjs';

if (writeManifest()) console.log('esbuild: regenerated src/manifest.ts from package.json');

const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['vscode'],
  sourcemap: true,
  logLevel: 'warning',
};

await esbuild.build({
  ...common,
  entryPoints: ['src/extension.ts'],
  outfile: 'dist/extension.js',
  minify: process.argv.includes('--minify'),
});
if (process.argv.includes('--tests')) {
  // mocha stays a runtime require: it is loaded from node_modules in the extension host.
  await esbuild.build({
    ...common,
    entryPoints: ['test/e2e/suite/index.ts'],
    outfile: 'dist/test/suite.js',
    external: ['vscode', 'mocha'],
  });
}
