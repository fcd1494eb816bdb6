/**
 * The published Cedar schema for MCP entities (issue 40): `schema/interlock.cedarschema`, shipped in the package.
 * Every Cedar policy is validated against it at load.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { once } from '../../lazy.js';

/** The Cedar namespace of Interlock's entity types and actions. */
export const CEDAR_NAMESPACE = 'Interlock';

/** Where the schema file is (in the package: `schema/interlock.cedarschema`). */
export function cedarSchemaPath(): string {
  // src/security/cedar and dist/security/cedar both sit three levels below the package root.
  return fileURLToPath(new URL('../../../schema/interlock.cedarschema', import.meta.url));
}

/** The schema's text, read at first use. */
export const cedarSchemaText = once((): string => readFileSync(cedarSchemaPath(), 'utf8'));
