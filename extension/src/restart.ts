/** When the server must be restarted, and a queue that never runs two restarts at once. */
import { SETTING, type SettingKey } from './manifest';
import { LANGUAGE_CLIENT_SETTINGS, settingId } from './settings';

/** Settings that change which process runs: a new server is needed. */
export const PROCESS_SETTINGS: readonly SettingKey[] = ['enable', 'interpreter', 'importStrategy', 'args'];
/** Every other setting the running server takes anew when told (`workspace/didChangeConfiguration`). */
export const LIVE_SETTINGS = (Object.keys(SETTING) as SettingKey[]).filter(
  (key) => !PROCESS_SETTINGS.includes(key) && !LANGUAGE_CLIENT_SETTINGS.includes(key),
);

export type ConfigAction = 'restart' | 'notify' | 'none';

/** `affects` is `ConfigurationChangeEvent.affectsConfiguration`: true when any folder's value changed. */
export function configChangeAction(affects: (section: string) => boolean): ConfigAction {
  if (PROCESS_SETTINGS.map(settingId).some(affects)) return 'restart';
  if (LIVE_SETTINGS.map(settingId).some(affects)) return 'notify';
  return 'none';
}

/**
 * Runs `task` for each burst of requests: a request made while one runs is
 * coalesced into a single follow-up run, so the last settings always win.
 */
export class SerialRunner {
  private running: Promise<void> | undefined;
  private pending = false;

  constructor(
    private readonly task: () => Promise<void>,
    private readonly onError: (err: unknown) => void,
  ) {}

  request(): Promise<void> {
    if (this.running) {
      this.pending = true;
      return this.running;
    }
    this.running = this.loop().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async loop(): Promise<void> {
    do {
      this.pending = false;
      try {
        await this.task();
      } catch (err) {
        this.onError(err);
      }
    } while (this.pending);
  }
}
