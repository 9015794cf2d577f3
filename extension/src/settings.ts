/** Reads torchlint's settings into one plain object, applying workspace-trust limits. */

export type ImportStrategy = 'useBundled' | 'fromEnvironment';
export type Trace = 'off' | 'messages' | 'verbose';

export interface Settings {
  enable: boolean;
  interpreter: string[];
  importStrategy: ImportStrategy;
  args: string[];
  lintOnChange: boolean;
  severity: Record<string, string>;
  select: string[];
  ignore: string[];
  probe: { enabled: boolean; timeoutSeconds: number; maxSteps: number };
  trace: Trace;
}

/** The part of `vscode.WorkspaceConfiguration` this module needs (so tests can fake it). */
export interface ConfigReader {
  get<T>(section: string, defaultValue: T): T;
}

export interface SettingsContext {
  trusted: boolean;
  workspaceFolder?: string;
  env?: Record<string, string | undefined>;
}

const STRATEGIES: readonly ImportStrategy[] = ['useBundled', 'fromEnvironment'];
const TRACES: readonly Trace[] = ['off', 'messages', 'verbose'];
const SEVERITIES = new Set(['error', 'warning', 'info', 'off']);

/** `${workspaceFolder}`, `${userHome}` and `${env:NAME}` in a path-like setting. */
export function expandVariables(value: string, ctx: SettingsContext): string {
  const env = ctx.env ?? {};
  return value.replace(/\$\{(workspaceFolder|userHome|env:([A-Za-z_][A-Za-z0-9_]*))\}/g, (whole, name, envName) => {
    if (envName !== undefined) return env[envName] ?? '';
    if (name === 'workspaceFolder') return ctx.workspaceFolder ?? whole;
    return env.HOME ?? env.USERPROFILE ?? whole;
  });
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && v.trim() !== '') : [];
}

function codes(value: unknown): string[] {
  return strings(value).map((c) => c.trim().toUpperCase());
}

function positive(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}

export function readSettings(cfg: ConfigReader, ctx: SettingsContext): Settings {
  const strategy = cfg.get<string>('importStrategy', 'useBundled');
  const trace = cfg.get<string>('trace.server', 'off');
  const severity: Record<string, string> = {};
  for (const [code, level] of Object.entries(cfg.get<Record<string, unknown>>('severity', {}) ?? {})) {
    if (typeof level === 'string' && SEVERITIES.has(level.toLowerCase())) {
      severity[code.trim().toUpperCase()] = level.toLowerCase();
    }
  }
  const settings: Settings = {
    enable: cfg.get<boolean>('enable', true) !== false,
    interpreter: strings(cfg.get<unknown>('interpreter', [])).map((p) => expandVariables(p, ctx)),
    importStrategy: STRATEGIES.includes(strategy as ImportStrategy) ? (strategy as ImportStrategy) : 'useBundled',
    args: strings(cfg.get<unknown>('args', [])).map((a) => expandVariables(a, ctx)),
    lintOnChange: cfg.get<boolean>('lintOnChange', true) !== false,
    severity,
    select: codes(cfg.get<unknown>('select', [])),
    ignore: codes(cfg.get<unknown>('ignore', [])),
    probe: {
      enabled: cfg.get<boolean>('probe.enabled', false) === true,
      timeoutSeconds: positive(cfg.get<unknown>('probe.timeoutSeconds', 60), 60),
      maxSteps: Math.floor(positive(cfg.get<unknown>('probe.maxSteps', 20), 20)),
    },
    trace: TRACES.includes(trace as Trace) ? (trace as Trace) : 'off',
  };
  if (!ctx.trusted) {
    // Untrusted code must not choose what runs: only the bundled server, never the probe.
    settings.importStrategy = 'useBundled';
    settings.probe = { ...settings.probe, enabled: false };
  }
  return settings;
}
