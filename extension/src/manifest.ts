// Generated from package.json by scripts/manifest.mjs: do not edit.

/** The configuration section and the language client's id. */
export const SECTION = "torchlint";

/** The commands package.json contributes, by id without the section. */
export const COMMAND = {
  "restart": "torchlint.restart",
  "lintWorkspace": "torchlint.lintWorkspace",
  "fixAll": "torchlint.fixAll",
  "showRuleDocumentation": "torchlint.showRuleDocumentation",
  "runProbeOnFile": "torchlint.runProbeOnFile",
  "showLogs": "torchlint.showLogs",
  "selectInterpreter": "torchlint.selectInterpreter"
} as const;

export type CommandId = (typeof COMMAND)[keyof typeof COMMAND];

/** The settings package.json declares, by key without the section: their schema minus the prose. */
export const SETTING = {
  "enable": {
    "type": "boolean",
    "default": true,
    "scope": "resource"
  },
  "interpreter": {
    "type": "array",
    "items": {
      "type": "string"
    },
    "default": [],
    "scope": "resource"
  },
  "importStrategy": {
    "type": "string",
    "enum": [
      "useBundled",
      "fromEnvironment"
    ],
    "default": "useBundled",
    "scope": "resource"
  },
  "args": {
    "type": "array",
    "items": {
      "type": "string"
    },
    "default": [],
    "scope": "resource"
  },
  "lintOnChange": {
    "type": "boolean",
    "default": true,
    "scope": "resource"
  },
  "showSyntaxErrors": {
    "type": "boolean",
    "default": true,
    "scope": "resource"
  },
  "severity": {
    "type": "object",
    "default": {},
    "additionalProperties": {
      "type": "string",
      "enum": [
        "error",
        "warning",
        "info",
        "off"
      ]
    },
    "scope": "resource"
  },
  "select": {
    "type": "array",
    "items": {
      "type": "string"
    },
    "default": [],
    "scope": "resource"
  },
  "ignore": {
    "type": "array",
    "items": {
      "type": "string"
    },
    "default": [],
    "scope": "resource"
  },
  "probe.enabled": {
    "type": "boolean",
    "default": false,
    "scope": "resource"
  },
  "probe.timeoutSeconds": {
    "type": "number",
    "default": 60,
    "minimum": 1,
    "scope": "resource"
  },
  "probe.maxSteps": {
    "type": "integer",
    "default": 20,
    "minimum": 1,
    "scope": "resource"
  },
  "trace.server": {
    "type": "string",
    "enum": [
      "off",
      "messages",
      "verbose"
    ],
    "default": "off",
    "scope": "window"
  }
} as const;

export type SettingKey = keyof typeof SETTING;
