/**
 * Reads torchlint's settings into one plain object, applying workspace-trust limits. Keys, defaults,
 * allowed values and minimums come from package.json (through the generated ./manifest), so the
 * Settings editor and the code cannot disagree.
 */
import { SECTION, SETTING, type SettingKey } from './manifest';

export type ImportStrategy = (typeof SETTING.importStrategy.enum)[number];
type Level = (typeof SETTING.severity.additionalProperties.enum)[number];

export interface Settings {
  enable: boolean;
  interpreter: string[];
  importStrategy: ImportStrategy;
  args: string[];
  lintOnChange: boolean;
  showSyntaxErrors: boolean;
  severity: Record<string, Level>;
  select: string[];
  ignore: string[];
  probe: { enabled: boolean; timeoutSeconds: number; maxSteps: number };
}

/** Read by vscode-languageclient itself (`<client id>.trace.server`), never by this code. */
export const LANGUAGE_CLIENT_SETTINGS: readonly SettingKey[] = ['trace.server'];

/** The full id of a setting, e.g. `torchlint.probe.enabled`. */
export function settingId(key: SettingKey): string {
  return `${SECTION}.${key}`;
}

/** The part of `vscode.WorkspaceConfiguration` this module needs (so tests can fake it). */
export interface ConfigReader {
  get<T>(section: SettingKey, defaultValue: T): T;
}

export interface SettingsContext {
  trusted: boolean;
  workspaceFolder?: string;
  env?: Record<string, string | undefined>;
}

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

function oneOf<T extends string>(value: unknown, allowed: readonly T[]): T | undefined {
  return allowed.find((a) => a === value);
}

export function readSettings(cfg: ConfigReader, ctx: SettingsContext): Settings {
  const get = (key: SettingKey): unknown => cfg.get<unknown>(key, SETTING[key].default);
  const flag = (key: 'enable' | 'lintOnChange' | 'showSyntaxErrors' | 'probe.enabled'): boolean => {
    const value = get(key);
    return typeof value === 'boolean' ? value : SETTING[key].default;
  };
  const atLeastMinimum = (key: 'probe.timeoutSeconds' | 'probe.maxSteps'): number => {
    const value = get(key);
    const { minimum, default: fallback } = SETTING[key];
    return typeof value === 'number' && Number.isFinite(value) && value >= minimum ? value : fallback;
  };
  const severity: Record<string, Level> = {};
  const levels = SETTING.severity.additionalProperties.enum;
  const table = get('severity');
  const entries = table && typeof table === 'object' && !Array.isArray(table) ? Object.entries(table) : [];
  for (const [code, level] of entries) {
    const known = oneOf(typeof level === 'string' ? level.toLowerCase() : undefined, levels);
    if (known) severity[code.trim().toUpperCase()] = known;
  }
  const settings: Settings = {
    enable: flag('enable'),
    interpreter: strings(get('interpreter')).map((p) => expandVariables(p, ctx)),
    importStrategy: oneOf(get('importStrategy'), SETTING.importStrategy.enum) ?? SETTING.importStrategy.default,
    args: strings(get('args')).map((a) => expandVariables(a, ctx)),
    lintOnChange: flag('lintOnChange'),
    showSyntaxErrors: flag('showSyntaxErrors'),
    severity,
    select: codes(get('select')),
    ignore: codes(get('ignore')),
    probe: {
      enabled: flag('probe.enabled'),
      timeoutSeconds: atLeastMinimum('probe.timeoutSeconds'),
      maxSteps: Math.floor(atLeastMinimum('probe.maxSteps')),
    },
  };
  if (!ctx.trusted) {
    // Untrusted code must not choose what runs: only the bundled server, never the probe.
    settings.importStrategy = 'useBundled';
    settings.probe = { ...settings.probe, enabled: false };
  }
  return settings;
}
