import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { parseToolSchemas, ToolSchemaInputSchema } from '../../src/tools/schema.js';

const readFile = {
  name: 'read_file',
  title: 'Read file',
  description: 'Reads a file',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  annotations: { readOnlyHint: true, openWorldHint: false },
};

function configErrorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('parseToolSchemas', () => {
  it('parses a list of MCP tools', () => {
    expect(parseToolSchemas('fs', [readFile])).toEqual([readFile]);
  });

  it('accepts a tools/list result as it is', () => {
    expect(parseToolSchemas('fs', { tools: [readFile], nextCursor: 'x' })).toEqual([readFile]);
  });

  it('keeps the input schema whole and adds a missing type', () => {
    const [tool] = parseToolSchemas('fs', [
      { name: 'x', inputSchema: { properties: { a: { type: 'string', 'x-extra': 1 } }, $defs: { d: {} } } },
    ]);
    expect(tool?.inputSchema).toEqual({
      type: 'object',
      properties: { a: { type: 'string', 'x-extra': 1 } },
      $defs: { d: {} },
    });
  });

  it('returns copies that share nothing with the input', () => {
    const input = [structuredClone(readFile)];
    const tool = parseToolSchemas('fs', input)[0]!;
    (tool.inputSchema.properties as Record<string, { type: string }>).path!.type = 'number';
    expect(input[0]?.inputSchema.properties.path.type).toBe('string');
  });

  it('does not change the input', () => {
    const input = Object.freeze([Object.freeze({ name: 'x', inputSchema: Object.freeze({}) })]);
    expect(parseToolSchemas('fs', input)[0]?.inputSchema).toEqual({ type: 'object' });
    expect(input[0]?.inputSchema).toEqual({});
  });

  it('accepts an empty list', () => {
    expect(parseToolSchemas('fs', [])).toEqual([]);
  });

  it.each<[string, unknown, string]>([
    ['input that is not a list', 'read_file', 'tools'],
    ['a tool that is not an object', [readFile, 7], 'tools[1]'],
    ['a missing name', [{ inputSchema: {} }], 'tools[0].name'],
    ['an empty name', [{ name: '', inputSchema: {} }], 'tools[0].name'],
    ['a name longer than 256', [{ name: 'x'.repeat(257), inputSchema: {} }], 'tools[0].name'],
    ['a missing inputSchema', [{ name: 'x' }], 'tools[0].inputSchema'],
    ['an inputSchema that is not an object', [{ name: 'x', inputSchema: [] }], 'tools[0].inputSchema'],
    [
      'an inputSchema whose type is not object',
      [readFile, readFile, { name: 'y', inputSchema: { type: 'string' } }],
      'tools[2].inputSchema.type',
    ],
    [
      'a property schema that is not an object',
      [{ name: 'x', inputSchema: { properties: { a: 'string' } } }],
      'tools[0].inputSchema.properties.a',
    ],
    [
      'a property name that is not an identifier',
      [{ name: 'x', inputSchema: { properties: { 'a-b': 1 } } }],
      'tools[0].inputSchema.properties.a-b',
    ],
    [
      'required that is not a list',
      [{ name: 'x', inputSchema: { required: 'a' } }],
      'tools[0].inputSchema.required',
    ],
    [
      'an outputSchema whose type is not object',
      [{ name: 'x', inputSchema: {}, outputSchema: { type: 'array' } }],
      'tools[0].outputSchema.type',
    ],
    [
      'an annotation of the wrong type',
      [{ name: 'x', inputSchema: {}, annotations: { readOnlyHint: 'yes' } }],
      'tools[0].annotations.readOnlyHint',
    ],
    ['a duplicate name', [readFile, { ...readFile, description: 'again' }], 'tools[1].name'],
    ['a tools/list result whose tools is not a list', { tools: 'x' }, 'tools'],
  ])('refuses %s, naming the server and the path', (_label, input, path) => {
    const error = configErrorOf(() => parseToolSchemas('fs', input));
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.server).toBe('fs');
    expect(error.message).toContain("server 'fs'");
    expect(error.issues.map((i) => i.path)).toContain(path);
    expect(error.message).toContain(path);
  });

  it('says which earlier entry a duplicate name repeats', () => {
    const error = configErrorOf(() => parseToolSchemas('fs', [readFile, readFile]));
    expect(error.issues).toEqual([
      { path: 'tools[1].name', message: 'duplicate tool name "read_file" (also at tools[0])' },
    ]);
  });

  it('explains that a tool schema must describe an object', () => {
    const error = configErrorOf(() =>
      parseToolSchemas('fs', [{ name: 'x', inputSchema: { type: 'string' } }]),
    );
    expect(error.issues[0]?.message).toMatch(/must be 'object'/);
  });

  it('refuses schemas that are not plain JSON data', () => {
    const error = configErrorOf(() =>
      parseToolSchemas('fs', [{ name: 'x', inputSchema: { default: () => 1 } }]),
    );
    expect(error.message).toMatch(/plain JSON data/);
  });

  it('drops fields Interlock does not use', () => {
    const [tool] = parseToolSchemas('fs', [{ ...readFile, _meta: { a: 1 } }]);
    expect(tool).toEqual(readFile);
  });

  it('keeps icons (issue 13), and refuses an icon without a source', () => {
    const icon = { src: 'https://example.com/i.png', mimeType: 'image/png', sizes: ['16x16'], theme: 'dark' };
    expect(parseToolSchemas('fs', [{ ...readFile, icons: [icon] }])[0]?.icons).toEqual([icon]);
    expect(() => parseToolSchemas('fs', [{ ...readFile, icons: [{ mimeType: 'image/png' }] }])).toThrow(
      /tools\[0\]\.icons\[0\]\.src/,
    );
  });

  it('exposes the schema for direct use', () => {
    expect(ToolSchemaInputSchema.safeParse(readFile).success).toBe(true);
  });
});
