/**
 * The JSON Schema of the project file, generated from {@link InterlockConfigSchema} and shipped as
 * `schema/interlock.config.schema.json` so editors can complete and check the file. A test keeps the shipped
 * file equal to what this function returns.
 */
import { z } from 'zod';
import { isJsonObject } from '../json.js';
import { InterlockConfigSchema } from './schema.js';

/** Where the schema is shipped inside the package. */
export const CONFIG_SCHEMA_PATH = 'schema/interlock.config.schema.json';

type Json = Record<string, unknown>;

/**
 * The project file's JSON Schema (draft-07, which the VS Code and YAML language servers read). Fields with
 * defaults are optional, as they are when written. The server entry is defined once and referenced from
 * `mcpServers` and `servers`.
 */
export function configJsonSchema(): Json {
  const schema = z.toJSONSchema(InterlockConfigSchema, {
    target: 'draft-7',
    io: 'input',
    unrepresentable: 'any',
  }) as Json;
  const properties = schema.properties as Record<string, Json>;
  const entry = properties.mcpServers?.additionalProperties;
  if (isJsonObject(entry)) {
    for (const key of ['mcpServers', 'servers']) {
      const map = properties[key];
      if (map !== undefined) map.additionalProperties = { $ref: '#/definitions/serverEntry' };
    }
    schema.definitions = { serverEntry: entry };
  }
  return forEditors(schema) as Json;
}

/** A string holding `${VAR}`: checked only after expansion, so an editor must accept it as written. */
const WITH_VARIABLE = { type: 'string', pattern: '\\$\\{[^}]+\\}' };

/**
 * Adjusts the generated schema to the file as written: a string with a `format` (a URL, a date) may hold a
 * `${VAR}` instead, and `anyOf` branches no value can match are dropped (`z.literal(Infinity)` comes out as
 * `{ type: 'number', const: null }`, as JSON has no Infinity).
 */
function forEditors(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(forEditors);
  if (!isJsonObject(value)) return value;
  const out: Json = {};
  for (const [key, v] of Object.entries(value)) {
    out[key] =
      key === 'anyOf' && Array.isArray(v)
        ? v.filter((b) => !(isJsonObject(b) && b.const === null && b.type === 'number')).map(forEditors)
        : forEditors(v);
  }
  if (out.type === 'string' && typeof out.format === 'string') {
    const { description, default: fallback, ...plain } = out;
    return {
      ...(description === undefined ? {} : { description }),
      ...(fallback === undefined ? {} : { default: fallback }),
      anyOf: [plain, WITH_VARIABLE],
    };
  }
  return out;
}
