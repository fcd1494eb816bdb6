/**
 * Generated files cannot drift: the shipped JSON Schema equals what the zod schemas generate, the field
 * tables of the reference pages (the project file, and the API's configuration types) equal what the schemas
 * say, every field has a description (written once, on the schema), and every sample project file in the docs
 * loads with the loader and validates against the schema. `INTERLOCK_WRITE_GENERATED=1` rewrites the files.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { Ajv } from 'ajv';
import ajvFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { configJsonSchema } from '../../src/config/json-schema.js';
import { loadInterlockConfig } from '../../src/config/load.js';
import { stripJsonComments } from '../../src/config/mcp-json.js';
import * as interop from '../../src/interop/index.js';
import * as security from '../../src/security/index.js';
import * as state from '../../src/state/index.js';
import { ROOT } from '../cli/helpers.js';
import { type DocumentedType, renderReference, renderTypes, withGenerated } from './reference-doc.js';

const { MCPServerConfigSchema } = interop;

const WRITE = process.env.INTERLOCK_WRITE_GENERATED === '1';
const SCHEMA_FILE = join(ROOT, 'schema/interlock.config.schema.json');
const REFERENCE_PAGE = join(ROOT, 'docs/reference/config-file.md');
const TYPES_PAGE = join(ROOT, 'docs/reference/config-types.md');

/** The public types that are zod schemas, in the order of the page: each gets its field table. */
const TYPES: readonly {
  name: string;
  aliases?: string[];
  module: 'interop' | 'security' | 'state';
  schema: string;
}[] = [
  {
    name: 'MCPServerConfigInput',
    aliases: [
      'MCPServerConfig',
      'StdioServerConfig',
      'SseServerConfig',
      'HttpServerConfig',
      'AutoServerConfig',
      'TransportKind',
    ],
    module: 'interop',
    schema: 'MCPServerConfigSchema',
  },
  { name: 'ToolFilter', module: 'interop', schema: 'ToolFilterSchema' },
  { name: 'ReconnectOptions', module: 'interop', schema: 'ReconnectSchema' },
  { name: 'OAuthConfig', module: 'interop', schema: 'OAuthConfigSchema' },
  { name: 'HeadersHelperConfig', module: 'interop', schema: 'HeadersHelperSchema' },
  { name: 'ServerTlsConfig', module: 'interop', schema: 'ServerTlsSchema' },
  { name: 'ServerProxyConfig', module: 'interop', schema: 'ServerProxySchema' },
  { name: 'NetworkConfig', module: 'interop', schema: 'NetworkConfigSchema' },
  { name: 'HttpConfig', module: 'interop', schema: 'HttpConfigSchema' },
  { name: 'Policy', module: 'security', schema: 'PolicySchema' },
  { name: 'PolicyRule', module: 'security', schema: 'PolicyRuleSchema' },
  { name: 'RuleCondition', module: 'security', schema: 'RuleConditionSchema' },
  { name: 'ArgConstraint', module: 'security', schema: 'ArgConstraintSchema' },
  { name: 'RedisStateStoreOptions', module: 'state', schema: 'RedisStateStoreOptionsSchema' },
];

const modules: Record<string, Record<string, unknown>> = { interop, security, state };

function documentedTypes(): DocumentedType[] {
  return TYPES.map((t) => {
    const schema = modules[t.module]?.[t.schema];
    if (!(schema instanceof z.ZodType)) throw new Error(`mcp-interlock/${t.module} exports no ${t.schema}`);
    const json = z.toJSONSchema(schema, { target: 'draft-7', io: 'input', unrepresentable: 'any' });
    return { ...t, module: `mcp-interlock/${t.module}`, json: json as Record<string, unknown> };
  });
}

/**
 * Descriptions are Markdown in the reference pages: outside code spans, `*` and `__` would turn into emphasis
 * (`mcp__{server}__{tool}` rendered as bold). Returns the descriptions that would.
 */
function emphasized(schema: unknown): string[] {
  if (Array.isArray(schema)) return schema.flatMap(emphasized);
  if (typeof schema !== 'object' || schema === null) return [];
  const out: string[] = [];
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'description' && typeof value === 'string') {
      if (/\*|__/.test(value.replace(/`[^`]*`/g, ''))) out.push(value);
    } else out.push(...emphasized(value));
  }
  return out;
}

/** Every property of every object in a JSON Schema, with its path, and whether it has a description. */
function undescribed(schema: unknown, path = ''): string[] {
  if (Array.isArray(schema)) return schema.flatMap((s) => undescribed(s, path));
  if (typeof schema !== 'object' || schema === null) return [];
  const node = schema as Record<string, unknown>;
  const out: string[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (key === 'properties' && typeof value === 'object' && value !== null) {
      for (const [field, sub] of Object.entries(value as Record<string, unknown>)) {
        const where = path === '' ? field : `${path}.${field}`;
        if (typeof (sub as { description?: unknown }).description !== 'string') out.push(where);
        out.push(...undescribed(sub, where));
      }
    } else if (typeof value === 'object') out.push(...undescribed(value, path));
  }
  return out;
}
const SNIPPETS = join(ROOT, 'docs/snippets/cli');

const schema = configJsonSchema();

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Every project file under docs/snippets/cli. */
function sampleProjects(dir = SNIPPETS): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sampleProjects(join(dir, e.name))
      : /^interlock\.config\.(ya?ml|json)$/.test(e.name)
        ? [join(dir, e.name)]
        : [],
  );
}

const parseFile = (path: string): unknown =>
  path.endsWith('.json')
    ? JSON.parse(stripJsonComments(readFileSync(path, 'utf8')))
    : parse(readFileSync(path, 'utf8'));

function validator() {
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajvFormats.default(ajv);
  return ajv.compile(schema);
}

describe('the shipped JSON Schema', () => {
  it('equals what the zod schemas generate', () => {
    if (WRITE) writeFileSync(SCHEMA_FILE, `${JSON.stringify(schema, null, 2)}\n`);
    const shipped = read(SCHEMA_FILE);
    expect(shipped, 'run INTERLOCK_WRITE_GENERATED=1 npx vitest run test/config').toBeDefined();
    expect(JSON.parse(shipped ?? '{}')).toEqual(schema);
  });

  it('has every server field of the interop schemas, each with a description for editors', () => {
    const entry = (
      schema.definitions as {
        serverEntry: { anyOf: { properties: Record<string, { description?: string }> }[] };
      }
    ).serverEntry;
    for (const [i, variant] of MCPServerConfigSchema.options.entries()) {
      const fields = Object.keys(variant.shape).filter((k) => k !== 'name');
      const properties = entry.anyOf[i]?.properties ?? {};
      for (const field of fields) {
        expect(properties[field], `${variant.shape.transport.value}.${field}`).toBeDefined();
        expect(properties[field]?.description, `description of ${field}`).toEqual(expect.any(String));
      }
    }
  });

  it('describes every field of the file, for editors and the reference page', () => {
    expect(undescribed(schema), 'fields without .describe() on their schema').toEqual([]);
  });

  it('accepts the sample project files and rejects a typo', () => {
    const validate = validator();
    const samples = sampleProjects();
    expect(samples.length).toBeGreaterThanOrEqual(3);
    for (const file of samples) {
      expect(validate(parseFile(file)), `${relative(ROOT, file)}: ${JSON.stringify(validate.errors)}`).toBe(
        true,
      );
    }
    expect(validate({ mcpServers: { a: { command: 'x', timeout: 5 } } })).toBe(false);
    expect(validate({ mcpServer: {} })).toBe(false);
  });
});

describe('the sample project files in the docs', () => {
  it.each(sampleProjects().map((f) => [relative(SNIPPETS, f), f]))(
    '%s loads and validates',
    async (_name, file) => {
      const config = await loadInterlockConfig({ file, env: {} });
      expect(config.servers.length).toBeGreaterThan(0);
      // What `interlock init` writes allows nothing yet; every other sample grants something.
      if (relative(SNIPPETS, file).startsWith(`init${sep}`)) expect(config.policy?.rules).toEqual([]);
      else expect(config.policy?.rules.length).toBeGreaterThan(0);
    },
  );
});

describe('the reference page', () => {
  it('has field tables equal to what the schema says', () => {
    const page = read(REFERENCE_PAGE) ?? '';
    const expected = withGenerated(page, renderReference(schema));
    if (WRITE) writeFileSync(REFERENCE_PAGE, expected);
    expect(read(REFERENCE_PAGE), 'run INTERLOCK_WRITE_GENERATED=1 npx vitest run test/config').toBe(expected);
  });
});

describe('the configuration types of the API reference', () => {
  it('describe every field, once, on the schema', () => {
    for (const type of documentedTypes()) {
      expect(undescribed(type.json), `fields of ${type.name} without .describe()`).toEqual([]);
    }
    // The project file's schema holds every description of both pages.
    expect(emphasized(schema), 'write `*` and `__` in code spans').toEqual([]);
  });

  it('have field tables equal to what the schemas say, with links between the types', () => {
    const page = read(TYPES_PAGE) ?? '';
    const expected = withGenerated(page, renderTypes(documentedTypes()));
    if (WRITE) writeFileSync(TYPES_PAGE, expected);
    expect(read(TYPES_PAGE), 'run INTERLOCK_WRITE_GENERATED=1 npx vitest run test/config').toBe(expected);
    expect(expected).toContain('| `tools` | [ToolFilter](#toolfilter) |');
    expect(expected).toContain('| `rules` (required) | list of [PolicyRule](#policyrule) |');
  });
});
