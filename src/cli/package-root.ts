/**
 * The root of this package (the directory of its package.json), found from this module's location by walking up.
 * The sources run from `src/cli/` under tsx, and the published build links modules into `dist/` and
 * `dist/chunks/`, so no fixed number of `../` is right for both.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../errors.js';

const PACKAGE_NAME = 'mcp-interlock';

let root: string | undefined;

/** The package's root directory; throws when no package.json named `mcp-interlock` is above this module. */
export function packageRoot(): string {
  if (root !== undefined) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && nameOf(manifest) === PACKAGE_NAME) {
      root = dir;
      return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) {
      throw new ConfigError(
        `No package.json named ${PACKAGE_NAME} above ${fileURLToPath(import.meta.url)}; reinstall the package.`,
      );
    }
    dir = parent;
  }
}

function nameOf(manifest: string): unknown {
  try {
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name;
  } catch {
    return undefined;
  }
}
