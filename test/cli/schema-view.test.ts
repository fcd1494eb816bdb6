/** How a tool's JSON Schema is shown as argument rows (issue 18, item 4), hostile schemas included. */
import { describe, expect, it } from 'vitest';
import { MAX_SCHEMA_DEPTH, MAX_SCHEMA_ROWS, schemaRows } from '../../src/cli/schema-view.js';

const row = (depth: number, name: string, type: string, required: boolean, about = '') => ({
  depth,
  name,
  type,
  required,
  about,
});

describe('schemaRows', () => {
  it('shows type, required, description, default, enum and bounds, with nested fields indented', () => {
    const { rows, truncated } = schemaRows({
      type: 'object',
      required: ['query', 'filter'],
      properties: {
        query: { type: 'string', description: 'What to look for.\n  Plain words.', minLength: 1 },
        limit: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
        order: { type: 'string', enum: ['asc', 'desc'], default: 'asc' },
        filter: {
          type: 'object',
          required: ['field'],
          properties: {
            field: { type: 'string', format: 'uri' },
            values: { type: 'array', items: { type: 'string' }, maxItems: 5 },
          },
        },
        note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
        tags: { type: 'object', additionalProperties: { type: 'number' } },
        mode: { const: 'fast' },
        old: { type: 'boolean', deprecated: true },
      },
    });
    expect(truncated).toBe(0);
    expect(rows).toEqual([
      row(0, 'query', 'string', true, 'What to look for. Plain words. (min length 1)'),
      row(0, 'limit', 'integer', false, '(default: 10, >= 1, <= 100)'),
      row(0, 'order', '"asc" | "desc"', false, '(default: "asc")'),
      row(0, 'filter', 'object', true),
      row(1, 'field', 'string (uri)', true),
      row(1, 'values', 'array of string', false, '(max items 5)'),
      row(0, 'note', 'string | null', false),
      row(0, 'tags', 'object of number', false),
      row(0, 'mode', '"fast"', false),
      row(0, 'old', 'boolean', false, '(deprecated)'),
    ]);
  });

  it('lists a long enum in the description, and shows the fields of objects in an array', () => {
    const values = Array.from({ length: 12 }, (_, i) => `value-${i}`);
    const { rows } = schemaRows({
      type: 'object',
      properties: {
        kind: { type: 'string', enum: values },
        edits: {
          type: 'array',
          items: { type: 'object', required: ['from'], properties: { from: { type: 'string' } } },
        },
      },
    });
    expect(rows[0]).toMatchObject({ type: 'string (12 values)' });
    expect(rows[0]?.about).toContain('one of: "value-0", "value-1"');
    expect(rows.slice(1)).toEqual([
      row(0, 'edits', 'array of object', false),
      row(1, 'from', 'string', true),
    ]);
  });

  it('follows local $refs once per path, so a recursive type ends', () => {
    const { rows } = schemaRows({
      type: 'object',
      $defs: {
        Node: {
          type: 'object',
          properties: {
            label: { type: 'string' },
            children: { type: 'array', items: { $ref: '#/$defs/Node' } },
          },
        },
      },
      properties: { root: { $ref: '#/$defs/Node' }, other: { $ref: 'https://example.com/schema' } },
    });
    expect(rows).toEqual([
      row(0, 'root', 'object', false),
      row(1, 'label', 'string', false),
      row(1, 'children', 'array of object', false),
      row(0, 'other', 'ref schema', false),
    ]);
  });

  it('stops at a bounded depth and row count, and shows control characters as text', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 5_000; i++) deep = { type: 'object', properties: { n: deep } };
    const nested = schemaRows(deep).rows;
    expect(nested).toHaveLength(MAX_SCHEMA_DEPTH + 1);
    expect(nested.at(-1)).toMatchObject({ name: '…', depth: MAX_SCHEMA_DEPTH });

    const properties = Object.fromEntries(
      Array.from({ length: MAX_SCHEMA_ROWS + 50 }, (_, i) => [`p${i}`, { type: 'string' }]),
    );
    const wide = schemaRows({ type: 'object', properties });
    expect(wide.rows).toHaveLength(MAX_SCHEMA_ROWS);
    expect(wide.truncated).toBe(50);

    const { rows } = schemaRows({
      type: 'object',
      properties: { 'evil\u001b[2J': { type: 'string', description: 'clears\u001b[2J the screen' } },
    });
    expect(rows[0]?.name).not.toContain('\u001b');
    expect(rows[0]?.about).not.toContain('\u001b');
  });

  it('gives no rows for a schema without properties, or for something that is not a schema', () => {
    expect(schemaRows({ type: 'object' }).rows).toEqual([]);
    expect(schemaRows(null).rows).toEqual([]);
    expect(schemaRows({ type: 'object', properties: [] }).rows).toEqual([]);
  });
});

describe('schemaRows and zod', () => {
  it('leaves out the safe-integer bounds zod writes for every .int()', () => {
    const { rows } = schemaRows({
      type: 'object',
      properties: {
        code: { type: 'integer', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
        port: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
      },
    });
    expect(rows.map((r) => r.about)).toEqual(['', '(>= 1)']);
  });
});
