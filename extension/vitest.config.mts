import { defineConfig } from 'vitest/config';
import * as path from 'node:path';

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts'],
    alias: {
      vscode: path.resolve(__dirname, 'test/unit/vscode.mock.ts'),
      'vscode-languageclient/node': path.resolve(__dirname, 'test/unit/languageclient.mock.ts'),
    },
  },
});
