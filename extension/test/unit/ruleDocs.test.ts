import { describe, expect, it, vi } from 'vitest';
import * as vscode from './vscode.mock';

const { docsCode, docsUri, linkDocs, RuleDocsProvider } = await import('../../src/ruleDocs');

function diagnostic(code: unknown, source = 'torchlint') {
  return { code, source, message: 'm' } as any;
}

describe('rule documentation in the editor', () => {
  it('names each rule and probe kind by a read-only virtual document', () => {
    expect(docsUri('TL601').toString()).toBe('torchlint-docs:/TL601.md');
    expect(docsCode(docsUri('TL601') as never)).toBe('TL601');
    expect(docsCode(docsUri('grads-not-cleared') as never)).toBe('grads-not-cleared');
    expect(docsCode(vscode.Uri.file('/TL601.md') as never)).toBeUndefined();
  });

  it("links each server diagnostic's code to the docs command, and leaves TL000 and others alone", () => {
    const [rule, probe, syntax, other] = linkDocs([
      diagnostic({ value: 'TL601', target: vscode.Uri.parse('https://example.invalid/TL601.md') }),
      diagnostic('grads-not-cleared', 'torchlint-probe'),
      diagnostic('TL000'),
      diagnostic('E501', 'ruff'),
    ] as never[]) as any[];
    expect(rule.code.value).toBe('TL601');
    expect(rule.code.target.toString()).toBe(`command:torchlint.showRuleDocumentation?${encodeURIComponent('["TL601"]')}`);
    expect(probe.code.target.toString()).toContain(encodeURIComponent('["grads-not-cleared"]'));
    expect(syntax.code).toBe('TL000');
    expect(other.code).toBe('E501');
  });

  it("serves a docs document from the running server's rendering", async () => {
    const client = { isRunning: () => true, sendRequest: vi.fn(async () => ({ markdown: '# TL601 unsafe-torch-load\n' })) };
    const provider = new RuleDocsProvider(() => client as never);
    expect(await provider.provideTextDocumentContent(docsUri('TL601') as never)).toBe('# TL601 unsafe-torch-load\n');
    expect(client.sendRequest).toHaveBeenCalledWith('workspace/executeCommand', {
      command: 'torchlint.showRuleDocs',
      arguments: ['TL601'],
    });
    const stopped = new RuleDocsProvider(() => undefined);
    expect(await stopped.provideTextDocumentContent(docsUri('TL601') as never)).toMatch(/not running/);
  });
});
