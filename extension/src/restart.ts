/** When the server must be restarted, and a queue that never runs two restarts at once. */

/** Settings that change which process runs: a new server is needed. */
export const PROCESS_SETTINGS = ['torchlint.enable', 'torchlint.interpreter', 'torchlint.importStrategy', 'torchlint.args'];
/** Settings the running server takes through `workspace/didChangeConfiguration`. */
export const LIVE_SETTINGS = [
  'torchlint.lintOnChange',
  'torchlint.severity',
  'torchlint.select',
  'torchlint.ignore',
  'torchlint.probe',
];

export type ConfigAction = 'restart' | 'notify' | 'none';

/** `affects` is `ConfigurationChangeEvent.affectsConfiguration`. */
export function configChangeAction(affects: (section: string) => boolean): ConfigAction {
  if (PROCESS_SETTINGS.some(affects)) return 'restart';
  if (LIVE_SETTINGS.some(affects)) return 'notify';
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
