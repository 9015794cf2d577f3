import { describe, expect, it } from 'vitest';

const { MAX_PATH_CHARS, shortPath } = await import('../../src/status');

describe('the status popup', () => {
  it('shows a short interpreter path whole, with the home folder as ~', () => {
    expect(shortPath('/usr/bin/python3', '/home/ann')).toBe('/usr/bin/python3');
    expect(shortPath('/home/ann/.venv/bin/python', '/home/ann')).toBe('~/.venv/bin/python');
  });

  it('cuts a long path in the middle, keeping the folders nearest the executable', () => {
    const long = '/home/ann/work/projects/2026/some-long-project-name/subproject/.venv/bin/python3.12';
    const shown = shortPath(long, '/home/ann');
    expect(shown.length).toBeLessThanOrEqual(MAX_PATH_CHARS);
    expect(shown).toBe('~/…/subproject/.venv/bin/python3.12');
    const deep = `/opt/${'x'.repeat(80)}/python`;
    expect(shortPath(deep).length).toBeLessThanOrEqual(MAX_PATH_CHARS);
    expect(shortPath(deep)).toMatch(/python$/);
  });
});
