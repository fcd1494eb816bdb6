import { describe, expect, it } from 'vitest';
import { isInterlockError, ToolInputError, ToolSchemaError } from '../../src/errors.js';
import { compileInputValidator, normalizeInputSchema } from '../../src/tools/validate.js';

const fileSchema = {
  type: 'object',
  properties: {
    path: { type: 'string' },
    options: {
      type: 'object',
      properties: { depth: { type: 'integer', minimum: 0 }, mode: { enum: ['fast', 'full'] } },
    },
    tags: { type: 'array', items: { type: 'string' } },
    email: { type: 'string', format: 'email' },
  },
  required: ['path'],
  additionalProperties: false,
};

function schemaErrorOf(fn: () => unknown): ToolSchemaError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ToolSchemaError) return error;
    throw error;
  }
  throw new Error('expected a ToolSchemaError');
}

describe('compileInputValidator', () => {
  const validate = compileInputValidator(fileSchema);

  it('accepts valid arguments', () => {
    expect(validate({ path: '/tmp/a', options: { depth: 2, mode: 'fast' }, tags: ['x'] })).toEqual([]);
  });

  it.each<[string, unknown, { field: string; message: string }[]]>([
    ['a missing required field by name', {}, [{ field: '/path', message: 'is required' }]],
    ['a field of the wrong type', { path: 3 }, [{ field: '/path', message: 'must be string' }]],
    [
      'a misspelt field by the name it was given (issue 39)',
      { pth: '/tmp/a' },
      [
        {
          field: '/path',
          message: "is required; 'pth' is not an argument of this tool: did you mean 'path'?",
        },
        { field: '/pth', message: 'is not an allowed property' },
      ],
    ],
    [
      'an unknown field far from any missing one',
      { colour: 'red' },
      [
        { field: '/path', message: 'is required' },
        { field: '/colour', message: 'is not an allowed property' },
      ],
    ],
    [
      'a nested field',
      { path: 'a', options: { depth: -1 } },
      [{ field: '/options/depth', message: 'must be >= 0' }],
    ],
    [
      'an enum field with its allowed values',
      { path: 'a', options: { mode: 'slow' } },
      [{ field: '/options/mode', message: 'must be one of ["fast","full"]' }],
    ],
    ['an array item', { path: 'a', tags: ['x', 2] }, [{ field: '/tags/1', message: 'must be string' }]],
    [
      'an unknown property',
      { path: 'a', extra: 1 },
      [{ field: '/extra', message: 'is not an allowed property' }],
    ],
    [
      'a bad format',
      { path: 'a', email: 'nope' },
      [{ field: '/email', message: 'must match format "email"' }],
    ],
    [
      'every problem at once',
      { path: 1, extra: true },
      [
        { field: '/extra', message: 'is not an allowed property' },
        { field: '/path', message: 'must be string' },
      ],
    ],
  ])('reports %s', (_label, args, issues) => {
    expect(validate(args)).toEqual(issues);
  });

  it('names the failing field in the ToolInputError message so a model can correct itself', () => {
    const error = new ToolInputError('mcp__fs__read_file', validate({}));
    expect(error.message).toContain('/path: is required');
  });

  it('escapes property names as JSON Pointer tokens', () => {
    const v = compileInputValidator({ properties: { 'a/b~c': { type: 'number' } }, required: ['x/y'] });
    expect(v({ 'a/b~c': 'no' })).toEqual([
      { field: '/x~1y', message: 'is required' },
      { field: '/a~1b~0c', message: 'must be number' },
    ]);
  });

  it.each<[string, unknown, string]>([
    ['null', null, 'null'],
    ['an array', [1], 'an array'],
    ['a string', 'path=/tmp', 'a string'],
    ['a Date', new Date(0), 'an instance of Date'],
    ['a Map', new Map(), 'an instance of Map'],
  ])('refuses %s as arguments at the root', (_label, args, got) => {
    expect(validate(args)).toEqual([{ field: '', message: `arguments must be a JSON object, got ${got}` }]);
  });

  it('treats missing arguments as an empty object', () => {
    expect(compileInputValidator({ type: 'object' })(undefined)).toEqual([]);
    expect(validate(undefined)).toEqual([{ field: '/path', message: 'is required' }]);
  });

  it('accepts arguments without a prototype', () => {
    const args = Object.assign(Object.create(null) as Record<string, unknown>, { path: 'a' });
    expect(validate(args)).toEqual([]);
  });

  it('does not count inherited properties such as constructor as present', () => {
    const v = compileInputValidator({ required: ['constructor', 'toString'] });
    expect(v({})).toEqual([
      { field: '/constructor', message: 'is required' },
      { field: '/toString', message: 'is required' },
    ]);
  });

  it('treats a __proto__ key in arguments as plain data', () => {
    const args = JSON.parse('{"path":"a","__proto__":{"polluted":true}}') as unknown;
    expect(validate(args)).toEqual([{ field: '/__proto__', message: 'is not an allowed property' }]);
    const required = compileInputValidator(JSON.parse('{"required":["__proto__"]}'));
    expect(required({})).toEqual([{ field: '/__proto__', message: 'is required' }]);
    expect(required(args)).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('never changes the arguments (no defaults, no coercion)', () => {
    const v = compileInputValidator({
      properties: { n: { type: 'number', default: 5 }, s: { type: 'string' } },
    });
    const args = { s: 'x' };
    expect(v(args)).toEqual([]);
    expect(args).toEqual({ s: 'x' });
    expect(v({ s: 1 })).toEqual([{ field: '/s', message: 'must be string' }]);
  });

  it('never changes the schema it was given', () => {
    const schema = structuredClone(fileSchema) as Record<string, unknown>;
    const frozen = Object.freeze({ properties: Object.freeze({ a: Object.freeze({ type: 'string' }) }) });
    compileInputValidator(schema);
    compileInputValidator(frozen);
    expect(schema).toEqual(fileSchema);
  });

  it('takes a schema without type as an object schema', () => {
    const v = compileInputValidator({ properties: { a: { type: 'string' } } });
    expect(v({ a: 1 })).toEqual([{ field: '/a', message: 'must be string' }]);
  });

  it('reports at most 20 problems and says how many more there were', () => {
    const properties = Object.fromEntries(
      Array.from({ length: 30 }, (_, i) => [`p${i}`, { type: 'string' }]),
    );
    const args = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`p${i}`, i]));
    const issues = compileInputValidator({ properties })(args);
    expect(issues).toHaveLength(21);
    expect(issues[20]).toEqual({ field: '', message: 'and 10 more problems' });
  });
});

describe('compileInputValidator dialects', () => {
  it('reads a schema without $schema as JSON Schema 2020-12', () => {
    const v = compileInputValidator({
      properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] } },
      dependentRequired: { a: ['b'] },
    });
    expect(v({ pair: ['x', 1] })).toEqual([]);
    expect(v({ pair: [1, 'x'] }).map((i) => i.field)).toEqual(['/pair/0', '/pair/1']);
    expect(v({ a: 1 })).toEqual([{ field: '/b', message: "is required when 'a' is present" }]);
  });

  it('resolves $defs references and reports unevaluated properties', () => {
    const v = compileInputValidator({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $defs: { name: { type: 'string', minLength: 1 } },
      properties: { first: { $ref: '#/$defs/name' } },
      unevaluatedProperties: false,
    });
    expect(v({ first: '' })).toEqual([{ field: '/first', message: 'must NOT have fewer than 1 characters' }]);
    expect(v({ first: 'a', other: 1 })).toEqual([{ field: '/other', message: 'is not an allowed property' }]);
  });

  it('reads draft-07 schemas with their own meaning of items', () => {
    for (const uri of [
      'http://json-schema.org/draft-07/schema#',
      'http://json-schema.org/draft-07/schema',
      'https://json-schema.org/draft-07/schema#',
    ]) {
      const v = compileInputValidator({
        $schema: uri,
        properties: { tuple: { type: 'array', items: [{ type: 'string' }] } },
        dependencies: { a: ['b'] },
      });
      expect(v({ tuple: ['x', 1] })).toEqual([]);
      expect(v({ tuple: [1] })).toEqual([{ field: '/tuple/0', message: 'must be string' }]);
      expect(v({ a: 1 })).toEqual([{ field: '/b', message: "is required when 'a' is present" }]);
    }
  });

  it('reads 2019-09 and draft-06 schemas', () => {
    const v2019 = compileInputValidator({
      $schema: 'https://json-schema.org/draft/2019-09/schema',
      dependentRequired: { a: ['b'] },
    });
    expect(v2019({ a: 1 })).toEqual([{ field: '/b', message: "is required when 'a' is present" }]);
    const v06 = compileInputValidator({
      $schema: 'http://json-schema.org/draft-06/schema#',
      properties: { n: { type: 'number', exclusiveMinimum: 0 } },
    });
    expect(v06({ n: 0 })).toEqual([{ field: '/n', message: 'must be > 0' }]);
  });

  it('reads draft-04 boolean exclusive bounds and id as draft-04 meant them', () => {
    const v = compileInputValidator({
      $schema: 'http://json-schema.org/draft-04/schema#',
      id: 'http://example.com/args',
      properties: {
        n: { type: 'number', maximum: 3, exclusiveMaximum: true, minimum: 0, exclusiveMinimum: false },
        tag: { enum: [{ exclusiveMaximum: true }] },
      },
    });
    expect(v({ n: 3 })).toEqual([{ field: '/n', message: 'must be < 3' }]);
    expect(v({ n: 0 })).toEqual([]);
    expect(v({ n: 2.9, tag: { exclusiveMaximum: true } })).toEqual([]);
  });

  it('refuses an unsupported dialect with a ToolSchemaError naming it', () => {
    const error = schemaErrorOf(() =>
      compileInputValidator(
        { $schema: 'http://json-schema.org/draft-03/schema#' },
        { toolName: 't', server: 's' },
      ),
    );
    expect(error.message).toContain('draft-03');
    expect(error.message).toContain("tool 't' of server 's'");
    expect(error.server).toBe('s');
  });
});

describe('compileInputValidator with unusable schemas', () => {
  it.each<[string, Record<string, unknown>, RegExp]>([
    ['an invalid type', { properties: { a: { type: 'strnig' } } }, /properties\/a\/type/],
    [
      'an unresolvable $ref',
      { properties: { a: { $ref: '#/$defs/missing' } } },
      /\$ref "#\/\$defs\/missing" at \/properties\/a points at nothing/,
    ],
    [
      'a remote $ref',
      { properties: { a: { $ref: 'https://example.com/s.json' } } },
      /\$ref "https:\/\/example.com\/s.json" at \/properties\/a names another document; Interlock never fetches/,
    ],
    ['an invalid pattern', { properties: { a: { type: 'string', pattern: '(' } } }, /regular expression/i],
    ['a URN $id without a namespace', { $id: 'urn:x' }, /URN/],
    ['an $async schema', { $async: true, properties: {} }, /\$async/],
    ['a non-JSON value', { properties: { a: { default: () => 1 } } }, /cannot be used/],
    ['a non-string $schema', { $schema: 7 }, /unsupported JSON Schema dialect/],
  ])('throws ToolSchemaError for %s', (_label, schema, message) => {
    const error = schemaErrorOf(() => compileInputValidator(schema));
    expect(isInterlockError(error, 'INVALID_TOOL_SCHEMA')).toBe(true);
    expect(error.message).toMatch(message);
  });

  it('ignores unknown formats and keywords', () => {
    const v = compileInputValidator({ properties: { a: { type: 'string', format: 'weird', 'x-ui': 1 } } });
    expect(v({ a: 'anything' })).toEqual([]);
  });

  it('keeps schemas with the same $id independent of each other', () => {
    const make = (type: string) =>
      compileInputValidator({
        $id: 'https://example.com/args',
        $defs: { v: { type } },
        properties: { a: { $ref: 'https://example.com/args#/$defs/v' } },
      });
    const strings = make('string');
    const numbers = make('number');
    expect(strings({ a: 1 })).toEqual([{ field: '/a', message: 'must be string' }]);
    expect(numbers({ a: 1 })).toEqual([]);
    expect(strings({ a: 'x' })).toEqual([]);
  });

  it('is not disturbed by a schema that claims the id of a meta schema', () => {
    for (const $id of [
      'https://json-schema.org/draft/2020-12/schema',
      'http://json-schema.org/draft-07/schema',
    ]) {
      try {
        compileInputValidator({ $id, properties: { a: { type: 'string' } } });
      } catch {
        // Refusing it is fine too; what matters is that later schemas still compile.
      }
    }
    expect(compileInputValidator({ properties: { a: { type: 'string' } } })({ a: 1 })).toHaveLength(1);
    const v07 = compileInputValidator({
      $schema: 'http://json-schema.org/draft-07/schema#',
      required: ['a'],
    });
    expect(v07({})).toEqual([{ field: '/a', message: 'is required' }]);
  });

  it('keeps validators working across many compilations', () => {
    const first = compileInputValidator({ required: ['a'] });
    for (let i = 0; i < 600; i++) compileInputValidator({ properties: { [`p${i}`]: { pattern: `^${i}$` } } });
    expect(first({})).toEqual([{ field: '/a', message: 'is required' }]);
    expect(compileInputValidator({ required: ['b'] })({})).toEqual([{ field: '/b', message: 'is required' }]);
  });
});

describe('patterns from servers (ReDoS)', () => {
  // With a backtracking engine, `^(a+)+$` against 60 a's and a '!' takes longer than the age of the universe;
  // these tests finish only because patterns run on RE2.
  const hostile = `${'a'.repeat(60)}!`;

  it('runs a catastrophic pattern in linear time and still reports the mismatch', () => {
    const v = compileInputValidator({ properties: { id: { type: 'string', pattern: '^(a+)+$' } } });
    expect(v({ id: hostile }).map((i) => i.field)).toEqual(['/id']);
    expect(v({ id: 'aaaa' })).toEqual([]);
  });

  it('runs patternProperties on RE2 too', () => {
    const v = compileInputValidator({
      patternProperties: { '^(x+x+)+y$': { type: 'number' } },
    });
    expect(v({ [`${'x'.repeat(60)}y`]: 'not a number' }).length).toBe(1);
    expect(v({ [`${'x'.repeat(60)}!`]: 'any' })).toEqual([]);
  });

  it('keeps each pattern its own when one schema has several', () => {
    const v = compileInputValidator({
      properties: {
        a: { type: 'string', pattern: '^[a-z]+$' },
        b: { type: 'string', pattern: '^[0-9]+$' },
        c: { type: 'string', pattern: '(?=x)x' },
      },
    });
    expect(v({ a: 'abc', b: '123', c: 'x' })).toEqual([]);
    expect(
      v({ a: '123', b: 'abc' })
        .map((i) => i.field)
        .sort(),
    ).toEqual(['/a', '/b']);
  });

  it('leaves a pattern RE2 cannot run (lookaround, backreferences) to the server', () => {
    const v = compileInputValidator({
      properties: {
        strong: { type: 'string', pattern: '^(?=.*[A-Z]).{8,}$' },
        twice: { type: 'string', pattern: '^(a)\\1$' },
      },
    });
    expect(v({ strong: 'weak', twice: 'ab' })).toEqual([]);
  });
});

describe('normalizeInputSchema', () => {
  it('adds type object when type is missing, as a copy', () => {
    const schema = Object.freeze({ properties: {} });
    const normalized = normalizeInputSchema(schema);
    expect(normalized).toEqual({ properties: {}, type: 'object' });
    expect(normalized).not.toBe(schema);
    expect(schema).toEqual({ properties: {} });
  });

  it('keeps an existing type', () => {
    const schema = { type: 'object', required: ['a'] };
    const normalized = normalizeInputSchema(schema);
    expect(normalized).toEqual(schema);
    expect(normalized).not.toBe(schema);
  });
});
