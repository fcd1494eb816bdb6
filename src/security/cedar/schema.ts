/**
 * The published Cedar schema for MCP entities (issue 40), shipped in the package as `schema/interlock.cedarschema`.
 * Every Cedar policy is validated against it at load.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CEDAR_SCHEMA } from './schema-text.js';

/** The Cedar namespace of Interlock's entity types and actions. */
export const CEDAR_NAMESPACE = 'Interlock';

const FILE = join('schema', 'interlock.cedarschema');

/** The schema's text (the shipped file holds the same). */
export function cedarSchemaText(): string {
  return CEDAR_SCHEMA;
}

/**
 * Where the shipped schema file is: `schema/interlock.cedarschema` in the package, found by walking up from this
 * module (the sources and the linked build sit at different depths). Undefined when the file is not there.
 */
export function cedarSchemaPath(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, FILE))) return join(dir, FILE);
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}
