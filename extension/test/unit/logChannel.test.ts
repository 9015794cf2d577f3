import { describe, expect, it, vi } from 'vitest';
import { classify, LeveledChannel } from '../../src/logChannel';

function fakeLog() {
  return { name: 'torchlint', trace: vi.fn(), debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() } as any;
}

describe('the language client output channel', () => {
  it('logs a normal server exit as info, and other exits as errors', () => {
    expect(classify('[Error - 10:02:03 AM] Server process exited with code 0.')).toEqual({
      level: 'info',
      text: 'Server process exited with code 0.',
    });
    expect(classify('[Error - 10:02:03 AM] Server process exited with code 1.').level).toBe('error');
    expect(classify('[Warn  - 10:02:03] Connection to server got closed.').level).toBe('warn');
  });

  it("logs the server's stderr records at their Python logging level, tracebacks with their record", () => {
    const log = fakeLog();
    const channel = new LeveledChannel(log);
    channel.append('ERROR:pygls.protocol:Failed to handle request 3\nTraceback (most recent call last):\n  File "x.py"');
    channel.append(', line 1\nWARNING:torchlint.lsp:didChange for a document that is not open\n');
    channel.append('INFO:torchlint.lsp:linted a.py\nDEBUG:torchlint.lsp:change applied\n');
    expect(log.error.mock.calls.map(([t]: [string]) => t)).toEqual([
      'ERROR:pygls.protocol:Failed to handle request 3',
      'Traceback (most recent call last):',
      '  File "x.py", line 1',
    ]);
    expect(log.warn).toHaveBeenCalledWith('WARNING:torchlint.lsp:didChange for a document that is not open');
    expect(log.info).toHaveBeenCalledWith('INFO:torchlint.lsp:linted a.py');
    expect(log.debug).toHaveBeenCalledWith('DEBUG:torchlint.lsp:change applied');
  });

  it("logs the client's own lines without their header, data lines at the header's level", () => {
    const log = fakeLog();
    const channel = new LeveledChannel(log);
    channel.appendLine('[Error - 10:02:03] Request workspace/executeCommand failed.');
    channel.appendLine('  Message: torch is not installed');
    channel.appendLine('[Trace - 10:02:04] Sending notification \'textDocument/didChange\'.');
    expect(log.error.mock.calls).toEqual([['Request workspace/executeCommand failed.'], ['  Message: torch is not installed']]);
    expect(log.info).toHaveBeenCalledWith("Sending notification 'textDocument/didChange'.");
  });
});
