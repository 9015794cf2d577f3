import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/folders';

const folders = (...paths: string[]) => paths.map((fsPath) => ({ uri: { fsPath } }));

describe('projectRoot', () => {
  it('is the only folder of a single-folder workspace, and nothing without one', () => {
    expect(projectRoot(folders('/ws'))?.uri.fsPath).toBe('/ws');
    expect(projectRoot([])).toBeUndefined();
  });
  it('is the first folder among siblings, in the order the workspace lists them', () => {
    expect(projectRoot(folders('/b', '/a'))?.uri.fsPath).toBe('/b');
  });
  it('skips a folder that another folder contains', () => {
    expect(projectRoot(folders('/repo/sub', '/other', '/repo'))?.uri.fsPath).toBe('/other');
    expect(projectRoot(folders('/repo/sub', '/repo'))?.uri.fsPath).toBe('/repo');
  });
  it('does not take a shared name prefix for containment', () => {
    expect(projectRoot(folders('/repo-tools', '/repo'))?.uri.fsPath).toBe('/repo-tools');
  });
});
