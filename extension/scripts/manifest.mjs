// Writes src/manifest.ts from package.json: the section, command ids and setting schemas the
// TypeScript side uses, as literal types, so package.json stays their one source and a typo or a
// missing handler is a compile error. The build runs it; test/unit/manifest.test.ts fails when the
// committed file is stale.
//   node scripts/manifest.mjs   (npm run manifest)
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const PACKAGE_JSON = path.join(ROOT, 'package.json');
export const MANIFEST_MODULE = path.join(ROOT, 'src', 'manifest.ts');

/** Schema keys that are prose for the Settings editor, of no use to the code. */
const PROSE = new Set(['description', 'markdownDescription', 'enumDescriptions', 'markdownEnumDescriptions']);

/** The TypeScript source of src/manifest.ts for this package.json. */
export function render(pkg) {
  const section = pkg.name;
  const local = (id) => {
    if (!id.startsWith(`${section}.`)) throw new Error(`manifest: ${id} is not under "${section}."`);
    return id.slice(section.length + 1);
  };
  const commands = Object.fromEntries(pkg.contributes.commands.map(({ command }) => [local(command), command]));
  const settings = Object.fromEntries(
    Object.entries(pkg.contributes.configuration.properties).map(([key, schema]) => [
      local(key),
      Object.fromEntries(Object.entries(schema).filter(([field]) => !PROSE.has(field))),
    ]),
  );
  const json = (value) => JSON.stringify(value, null, 2);
  return `// Generated from package.json by scripts/manifest.mjs: do not edit.

/** The configuration section and the language client's id. */
export const SECTION = ${json(section)};

/** The commands package.json contributes, by id without the section. */
export const COMMAND = ${json(commands)} as const;

export type CommandId = (typeof COMMAND)[keyof typeof COMMAND];

/** The settings package.json declares, by key without the section: their schema minus the prose. */
export const SETTING = ${json(settings)} as const;

export type SettingKey = keyof typeof SETTING;
`;
}

/** Brings src/manifest.ts up to date with package.json; true when it changed. */
export function writeManifest() {
  const text = render(JSON.parse(fs.readFileSync(PACKAGE_JSON, 'utf8')));
  const current = fs.existsSync(MANIFEST_MODULE) ? fs.readFileSync(MANIFEST_MODULE, 'utf8') : '';
  if (text === current) return false;
  fs.writeFileSync(MANIFEST_MODULE, text);
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (writeManifest()) console.log(`manifest: wrote ${path.relative(ROOT, MANIFEST_MODULE)}`);
}
