/**
 * The user's yes to running the probe in this workspace, kept in the extension's workspace state:
 * consenting must not write `.vscode/settings.json` into the user's project (a file they would
 * have to notice, ignore or commit). The `torchlint.probe.enabled` setting still works as well.
 */
import type * as vscode from 'vscode';

export const PROBE_CONSENT_KEY = 'torchlint.probe.consented';

export class ProbeConsent {
  constructor(private readonly state: vscode.Memento) {}

  get given(): boolean {
    return this.state.get<boolean>(PROBE_CONSENT_KEY, false) === true;
  }

  give(): Thenable<void> {
    return this.state.update(PROBE_CONSENT_KEY, true);
  }
}
