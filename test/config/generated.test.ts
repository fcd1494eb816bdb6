/**
 * Generated files cannot drift: the shipped JSON Schema equals what the zod schemas generate, the field
 * tables of the reference page equal what the schema says, and every sample project file in the docs loads
 * with the loader and validates against the schema. `INTERLOCK_WRITE_GENERATED=1` rewrites the files.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Ajv } from 'ajv';
import ajvFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { configJsonSchema } from '../../src/config/json-schema.js';
import { loadInterlockConfig } from '../../src/config/load.js';
import { MCPServerConfigSchema } from '../../src/interop/config.js';
import { stripJsonComments } from '../../src/interop/config-file.js';
import { ROOT } from '../cli/helpers.js';
import { renderReference, withGenerated } from './reference-doc.js';

const WRITE = process.env.INTERLOCK_WRITE_GENERATED === '1';
const SCHEMA_FILE = join(ROOT, 'schema/interlock.config.schema.json');
const REFERENCE_PAGE = join(ROOT, 'docs/reference/config-file.md');
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
      expect(config.policy?.rules.length).toBeGreaterThan(0);
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
