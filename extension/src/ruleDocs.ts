/**
 * Rule documentation inside the editor, offline: a read-only virtual document per rule (or probe
 * observation kind), `torchlint-docs:/TL601.md`, whose text the running server renders. A virtual
 * document is never dirty, so closing its preview asks nothing; and the link of each diagnostic's
 * code opens it, where the server's link (kept for other editors, the CLI and SARIF) is a web page.
 */
import * as vscode from 'vscode';
import { ExecuteCommandRequest, type LanguageClient } from 'vscode-languageclient/node';
import { COMMAND } from './manifest';

export const DOCS_SCHEME = 'torchlint-docs';

/** The server command that renders one rule's (or probe kind's) documentation as Markdown. */
export const RULE_DOCS_COMMAND = 'torchlint.showRuleDocs';

/** Rule codes (TL601) and probe observation kinds (grads-not-cleared): what a docs URI may name. */
const DOCS_NAME = /^(TL\d{3}|[a-z]+(?:-[a-z]+)*)$/;

/** The virtual document of `code`'s documentation. */
export function docsUri(code: string): vscode.Uri {
  return vscode.Uri.from({ scheme: DOCS_SCHEME, path: `/${code}.md` });
}

/** The code a docs URI names, or undefined for any other URI. */
export function docsCode(uri: vscode.Uri): string | undefined {
  if (uri.scheme !== DOCS_SCHEME) return undefined;
  const name = uri.path.replace(/^\//, '').replace(/\.md$/, '');
  return DOCS_NAME.test(name) ? name : undefined;
}

/**
 * The link a diagnostic's code gets in the editor: a command URI that opens the documentation
 * preview (VS Code opens the code links of hovers and of the Problems panel with commands allowed).
 */
export function docsCommandUri(code: string): vscode.Uri {
  return vscode.Uri.from({
    scheme: 'command',
    path: COMMAND.showRuleDocumentation,
    query: encodeURIComponent(JSON.stringify([code])),
  });
}

/** The code of a diagnostic from the server whose documentation the editor can show, else undefined. */
export function documentedCode(diagnostic: vscode.Diagnostic): string | undefined {
  if (diagnostic.source !== 'torchlint' && diagnostic.source !== 'torchlint-probe') return undefined;
  const code = typeof diagnostic.code === 'object' ? diagnostic.code.value : diagnostic.code;
  if (code === undefined || !DOCS_NAME.test(String(code)) || String(code) === 'TL000') return undefined;
  return String(code);
}

/** Points the code link of each documented diagnostic at the in-editor docs (in place). */
export function linkDocs(diagnostics: vscode.Diagnostic[]): vscode.Diagnostic[] {
  for (const d of diagnostics) {
    const code = documentedCode(d);
    if (code !== undefined) d.code = { value: code, target: docsCommandUri(code) };
  }
  return diagnostics;
}

/** Serves `torchlint-docs:` documents from the running server. */
export class RuleDocsProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly client: () => LanguageClient | undefined) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const code = docsCode(uri);
    if (code === undefined) return `# Not a torchlint rule\n\n\`${uri.toString()}\` names no rule.\n`;
    const client = this.client();
    if (!client?.isRunning()) {
      return `# ${code}\n\nThe torchlint server is not running: its documentation comes from the server. Start it with *torchlint: Restart Server*.\n`;
    }
    const docs = (await client.sendRequest(ExecuteCommandRequest.type, {
      command: RULE_DOCS_COMMAND,
      arguments: [code],
    })) as { markdown: string };
    return docs.markdown;
  }
}
