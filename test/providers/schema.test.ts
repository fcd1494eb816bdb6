/**
 * Tool schemas in the form the model APIs accept: what is converted, what is refused, and (property test)
 * that a converted schema accepts every argument object the original accepts, so nothing valid is lost.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toProviderSchema } from '../../src/providers/schema.js';
import { compileInputValidator } from '../../src/tools/validate.js';

describe('toProviderSchema', () => {
  it('leaves an ordinary object schema alone, minus $schema, and adds empty properties when missing', () => {
    const input = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { a: { type: 'string' } },
    };
    expect(toProviderSchema(input)).toEqual({
      schema: { type: 'object', properties: { a: { type: 'string' } } },
      changes: [],
    });
    expect(toProviderSchema({}).schema).toEqual({ type: 'object', properties: {} });
  });

  it('caches per schema object and never changes the caller’s schema', () => {
    const input = { anyOf: [{ type: 'object', properties: { a: { type: 'string' } } }] };
    const copy = structuredClone(input);
    const first = toProviderSchema(input);
    expect(toProviderSchema(input)).toBe(first);
    expect(input).toEqual(copy);
    expect(Object.isFrozen(first.schema)).toBe(true);
  });

  it('inlines a top-level $ref to a local definition and keeps $defs for nested refs', () => {
    const converted = toProviderSchema({
      $ref: '#/$defs/Args',
      $defs: {
        Args: { type: 'object', properties: { p: { $ref: '#/$defs/Point' } }, required: ['p'] },
        Point: { type: 'object', properties: { x: { type: 'number' } } },
      },
    });
    expect(converted.schema).toEqual({
      type: 'object',
      properties: { p: { $ref: '#/$defs/Point' } },
      required: ['p'],
      $defs: {
        Args: { type: 'object', properties: { p: { $ref: '#/$defs/Point' } }, required: ['p'] },
        Point: { type: 'object', properties: { x: { type: 'number' } } },
      },
    });
    expect(converted.changes).toEqual(["inlined the top-level $ref '#/$defs/Args'"]);
  });

  it('merges a top-level allOf: properties of all, required of all', () => {
    const { schema } = toProviderSchema({
      allOf: [
        { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
        { type: 'object', properties: { b: { type: 'number' }, a: { minLength: 2 } }, required: ['b'] },
      ],
    });
    expect(schema).toEqual({
      type: 'object',
      properties: { a: { allOf: [{ type: 'string' }, { minLength: 2 }] }, b: { type: 'number' } },
      required: ['a', 'b'],
    });
  });

  it('drops a top-level enum or not, and narrows a type list to object', () => {
    const converted = toProviderSchema({
      type: ['object', 'null'],
      not: { required: ['x'] },
      properties: {},
    });
    expect(converted.schema).toEqual({ type: 'object', properties: {} });
    expect(converted.changes).toHaveLength(2);
  });

  it('refuses what no API can take, saying why', () => {
    expect(() => toProviderSchema({ type: 'string' }, 't1')).toThrow(
      expect.objectContaining({
        code: 'INVALID_TOOL_SCHEMA',
        message: expect.stringContaining("'t1' has top-level type"),
      }),
    );
    expect(() => toProviderSchema({ $ref: 'https://example.com/s.json' }, 't2')).toThrow(
      /not a local definition/,
    );
    expect(() => toProviderSchema({ $ref: '#/$defs/Nope' }, 't3')).toThrow(/points at nothing/);
    expect(() => toProviderSchema({ anyOf: [{ type: 'string' }, { type: 'number' }] }, 't4')).toThrow(
      /without any object schema/,
    );
  });

  it('types a property from the alternatives that declare it (a hint: the server checks the exact shape)', () => {
    // zod's discriminated unions convert to open alternatives like these.
    const { schema } = toProviderSchema({
      anyOf: [
        {
          type: 'object',
          properties: { kind: { const: 'url' }, url: { type: 'string' } },
          required: ['kind', 'url'],
        },
        {
          type: 'object',
          properties: { kind: { const: 'id' }, id: { type: 'integer' } },
          required: ['kind', 'id'],
        },
      ],
    });
    expect(schema).toEqual({
      type: 'object',
      properties: {
        kind: { anyOf: [{ const: 'url' }, { const: 'id' }] },
        url: { type: 'string' },
        id: { type: 'integer' },
      },
      required: ['kind'],
      description: 'Arguments take one of these shapes: {kind, url} | {kind, id}.',
    });
  });

  it('accepts every argument object the original accepts, for closed alternatives (property, against ajv)', () => {
    const keys = ['a', 'b', 'c', 'd'] as const;
    const leaf = fc.constantFrom<Record<string, unknown>>(
      { type: 'string' },
      { type: 'integer' },
      { type: 'number', minimum: 0 },
      { type: 'boolean' },
      { enum: ['x', 'y'] },
      {},
    );
    const member = fc.record(
      {
        type: fc.constant('object'),
        properties: fc.dictionary(fc.constantFrom(...keys), leaf, { maxKeys: 3 }),
        required: fc.subarray([...keys], { maxLength: 2 }),
        additionalProperties: fc.constant(false),
      },
      { requiredKeys: ['type', 'properties', 'additionalProperties'] },
    );
    const schema = fc.record(
      {
        combinator: fc.constantFrom('anyOf', 'oneOf', 'allOf'),
        members: fc.array(member, { minLength: 1, maxLength: 3 }),
        topRequired: fc.subarray([...keys], { maxLength: 1 }),
      },
      { requiredKeys: ['combinator', 'members', 'topRequired'] },
    );
    const value = fc.dictionary(
      fc.constantFrom(...keys, 'zz'),
      fc.oneof(
        fc.string({ maxLength: 2 }),
        fc.integer({ min: -2, max: 2 }),
        fc.boolean(),
        fc.constantFrom('x', 'y', 1.5),
      ),
      { maxKeys: 4 },
    );
    fc.assert(
      fc.property(schema, fc.array(value, { minLength: 8, maxLength: 8 }), (s, values) => {
        const original: Record<string, unknown> = {
          type: 'object',
          [s.combinator]: s.members,
          ...(s.topRequired.length > 0 ? { required: s.topRequired } : {}),
        };
        const converted = toProviderSchema(original).schema as Record<string, unknown>;
        for (const k of ['anyOf', 'oneOf', 'allOf', 'enum', 'not']) expect(converted).not.toHaveProperty(k);
        expect(converted.type).toBe('object');
        const before = compileInputValidator(original);
        const after = compileInputValidator(converted);
        for (const v of values) {
          if (before(v).length === 0) expect(after(v)).toEqual([]);
        }
      }),
      { numRuns: 60 },
    );
  });
});
