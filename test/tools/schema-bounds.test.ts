/** Bounded `$ref` resolution and size limits on server schemas (issue 13, tool definitions), and output validation. */
import { describe, expect, it } from 'vitest';
import { isInterlockError } from '../../src/errors.js';
import { schemaBoundsProblem } from '../../src/tools/schema-bounds.js';
import { compileInputValidator, compileOutputValidator } from '../../src/tools/validate.js';

function schemaError(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    expect(isInterlockError(error, 'INVALID_TOOL_SCHEMA')).toBe(true);
    return error as Error;
  }
  throw new Error('expected a ToolSchemaError');
}

/** `$defs` d0..dn where each uses the next twice: 2^n subschemas once inlined. */
function laughs(n: number): Record<string, unknown> {
  const defs: Record<string, unknown> = { [`d${n}`]: { type: 'object' } };
  for (let i = 0; i < n; i++) {
    defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
  }
  return { $defs: defs, properties: { a: { $ref: '#/$defs/d0' } } };
}

describe('local $refs resolve', () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown>, string]>([
    [
      'recursion to the root ("#")',
      { properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } } },
      { name: 'a', children: [{ name: 'b', children: [{ name: 3 }] }] },
      '/children/0/children/0/name',
    ],
    [
      'a recursive $defs entry',
      {
        $defs: {
          node: { type: 'object', properties: { v: { type: 'number' }, next: { $ref: '#/$defs/node' } } },
        },
        properties: { head: { $ref: '#/$defs/node' } },
      },
      { head: { v: 1, next: { v: 'x' } } },
      '/head/next/v',
    ],
    [
      'an $anchor',
      { $defs: { n: { $anchor: 'num', type: 'number' } }, properties: { a: { $ref: '#num' } } },
      { a: 'x' },
      '/a',
    ],
    [
      'draft-07 definitions',
      {
        $schema: 'http://json-schema.org/draft-07/schema#',
        definitions: { n: { type: 'number' } },
        properties: { a: { $ref: '#/definitions/n' } },
      },
      { a: 'x' },
      '/a',
    ],
    [
      'an embedded $id',
      {
        $id: 'https://example.com/root.json',
        $defs: { n: { $id: 'num.json', type: 'number' } },
        properties: { a: { $ref: 'num.json' } },
      },
      { a: 'x' },
      '/a',
    ],
    [
      'a percent-encoded pointer to a boolean schema',
      { $defs: { 'no pe': false }, properties: { a: { $ref: '#/$defs/no%20pe' } } },
      { a: 1 },
      '/a',
    ],
  ])('%s', (_label, schema, bad, field) => {
    const validate = compileInputValidator(schema);
    expect(validate(bad).map((i) => i.field)).toContain(field);
  });
});

describe('schemas refused before they are compiled', () => {
  it.each<[string, Record<string, unknown>, RegExp]>([
    [
      'an https: $ref (never fetched)',
      { properties: { a: { $ref: 'https://example.com/s.json#/x' } } },
      /\$ref "https:\/\/example.com\/s.json#\/x" at \/properties\/a names another document; Interlock never fetches schemas/,
    ],
    ['a file: $ref', { properties: { a: { $ref: 'file:///etc/passwd' } } }, /never fetches schemas/],
    ['a relative $ref to another document', { items: { $ref: 'other.json' } }, /names another document/],
    [
      'a $ref into data (an unknown keyword)',
      { 'x-defs': { n: { type: 'number' } }, properties: { a: { $ref: '#/x-defs/n' } } },
      /not a subschema/,
    ],
    ['a $ref cycle on the same value', { $ref: '#' }, /loops back to \/ without descending into the value/],
    [
      'a cycle through allOf and anyOf',
      {
        $defs: { a: { allOf: [{ $ref: '#/$defs/b' }] }, b: { anyOf: [{ $ref: '#/$defs/a' }] } },
        $ref: '#/$defs/a',
      },
      /without descending into the value/,
    ],
    [
      'a billion-laughs $defs chain',
      laughs(40),
      /with every \$ref inlined it applies more than 100000 subschemas/,
    ],
    [
      'a long chain of $refs',
      (() => {
        const defs: Record<string, unknown> = { c3000: { type: 'number' } };
        for (let i = 0; i < 3000; i++) defs[`c${i}`] = { $ref: `#/$defs/c${i + 1}` };
        return { $defs: defs, properties: { a: { $ref: '#/$defs/c0' } } };
      })(),
      /subschemas and \$refs nest deeper than 128 levels/,
    ],
    [
      'a schema nested 5 000 levels deep',
      (() => {
        let deep: Record<string, unknown> = { type: 'object' };
        for (let i = 0; i < 5000; i++) deep = { properties: { a: deep } };
        return deep;
      })(),
      /nested deeper than 128 levels \(at \/properties\/a.*\.\.\./,
    ],
    [
      'a schema of 30 000 properties',
      {
        properties: Object.fromEntries(
          Array.from({ length: 30_000 }, (_, i) => [`p${i}`, { type: 'string' }]),
        ),
      },
      /more than 20000 JSON values/,
    ],
  ])('%s', (_label, schema, message) => {
    expect(schemaError(() => compileInputValidator(schema)).message).toMatch(message);
  });

  it('leaves references to the JSON Schema meta schemas to the validator, which knows them without fetching', () => {
    const validate = compileInputValidator({
      properties: { s: { $ref: 'https://json-schema.org/draft/2020-12/schema' } },
    });
    expect(validate({ s: { type: 'string' } })).toEqual([]);
    expect(validate({ s: { type: 5 } }).length).toBeGreaterThan(0);
  });

  it('accepts what stays under the limits: a $ref used many times, a recursive tree with two branches', () => {
    expect(schemaBoundsProblem(laughs(12))).toBeUndefined();
    const tree = {
      $defs: {
        t: { type: 'object', properties: { left: { $ref: '#/$defs/t' }, right: { $ref: '#/$defs/t' } } },
      },
      $ref: '#/$defs/t',
    };
    expect(schemaBoundsProblem(tree)).toBeUndefined();
    expect(compileInputValidator(tree)({ left: { right: { left: 1 } } }).map((i) => i.field)).toEqual([
      '/left/right/left',
    ]);
  });

  it('takes its limits from the options, and names the tool and server', () => {
    const message = schemaError(() =>
      compileInputValidator(laughs(5), {
        toolName: 'mcp__s__t',
        server: 's',
        limits: { maxExpandedNodes: 10 },
      }),
    ).message;
    expect(message).toMatch(
      /^The input schema of tool 'mcp__s__t' of server 's' cannot be used: with every \$ref/,
    );
  });

  it('never changes the schema it checks', () => {
    const schema = laughs(3);
    const copy = structuredClone(schema);
    schemaBoundsProblem(schema);
    compileInputValidator(schema);
    expect(schema).toEqual(copy);
  });
});

describe('compileOutputValidator', () => {
  const output = {
    type: 'object',
    properties: { temperature: { type: 'number' }, unit: { enum: ['C', 'F'] } },
    required: ['temperature'],
  };

  it('passes matching structured content and names the failing paths of the rest', () => {
    const validate = compileOutputValidator(output);
    expect(validate({ temperature: 21.5, unit: 'C' })).toEqual([]);
    expect(validate({ unit: 'K' })).toEqual([
      { field: '/temperature', message: 'is required' },
      { field: '/unit', message: 'must be one of ["C","F"]' },
    ]);
  });

  it('reads the root as given: an array root (MCP 2026-07-28) is not turned into an object', () => {
    const validate = compileOutputValidator({ type: 'array', items: { type: 'string' } });
    expect(validate(['a', 'b'])).toEqual([]);
    expect(validate(['a', 2]).map((i) => i.field)).toEqual(['/1']);
    expect(validate({}).length).toBe(1);
  });

  it('holds output schemas to the same bounds, naming the output schema', () => {
    expect(
      schemaError(() =>
        compileOutputValidator({ properties: { a: { $ref: 'https://example.com/x' } } }, { toolName: 't' }),
      ).message,
    ).toMatch(/^The output schema of tool 't' cannot be used: its \$ref "https:\/\/example.com\/x"/);
  });
});

describe('recursion that branches on one value', () => {
  it('refuses a $ref recursion applying the root twice per level (2^64 at the argument depth limit)', () => {
    const branch = { properties: { a: { $ref: '#' } } };
    const message = schemaError(() => compileInputValidator({ allOf: [branch, branch] })).message;
    expect(message).toMatch(
      /a recursive \$ref applies more than 100000 subschemas to one value \d+ levels down: the recursion branches on the same value/,
    );
  });

  it('accepts recursion whose branches go to different properties or array items', () => {
    const tree = {
      type: 'object',
      properties: {
        left: { $ref: '#' },
        right: { $ref: '#' },
        children: { type: 'array', items: { $ref: '#' } },
      },
    };
    expect(schemaBoundsProblem(tree)).toBeUndefined();
    const deep: Record<string, unknown> = {};
    let at = deep;
    for (let i = 0; i < 60; i++) {
      const next: Record<string, unknown> = {};
      at[i % 2 === 0 ? 'left' : 'right'] = next;
      at = next;
    }
    at.children = [{ left: 'not an object' }];
    expect(compileInputValidator(tree)(deep)).toHaveLength(1);
  });

  it('refuses structuredContent nested deeper than 64 levels instead of checking it', () => {
    const validate = compileOutputValidator({ type: 'object', properties: { next: { $ref: '#' } } });
    let value: Record<string, unknown> = {};
    for (let i = 0; i < 100; i++) value = { next: value };
    expect(validate(value)).toEqual([
      { field: '', message: 'is nested deeper than 64 levels, too deep to check' },
    ]);
  });
});
