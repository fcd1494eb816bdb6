import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_RESULT_CHARS,
  formatByteSize,
  mcpResultToString,
  toToolCallResult,
} from '../../src/tools/normalize.js';

/** Base64 of `bytes` zero bytes. */
const b64 = (bytes: number) => Buffer.alloc(bytes).toString('base64');

describe('mcpResultToString', () => {
  it.each<[string, unknown, string]>([
    ['null as an empty string', null, ''],
    ['undefined as an empty string', undefined, ''],
    ['a plain string as it is', 'hello', 'hello'],
    ['a number as its digits', 42, '42'],
    ['a plain { text }', { text: 'plain text' }, 'plain text'],
    ['a string { result }', { result: 'done' }, 'done'],
    ['an object { result } as compact JSON', { result: { ok: true, n: [1, 2] } }, '{"ok":true,"n":[1,2]}'],
    ['a null { result } as an empty string', { result: null }, ''],
    ['a legacy { toolResult }', { toolResult: { a: 1 } }, '{"a":1}'],
    ['an unknown object as compact JSON', { foo: 'bar' }, '{"foo":"bar"}'],
    ['an empty content array as an empty string', { content: [] }, ''],
    [
      'text parts joined with newlines',
      {
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
        ],
      },
      'one\ntwo',
    ],
    [
      'an image as a placeholder with MIME type and size',
      { content: [{ type: 'image', data: b64(1229), mimeType: 'image/png' }] },
      '[image: image/png, 1.2 KB]',
    ],
    [
      'audio as a placeholder with MIME type and size',
      { content: [{ type: 'audio', data: b64(10), mimeType: 'audio/wav' }] },
      '[audio: audio/wav, 10 B]',
    ],
    ['an image without a MIME type or data', { content: [{ type: 'image' }] }, '[image: unknown type]'],
    [
      'an embedded text resource under a uri header',
      {
        content: [
          { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'A\nB' } },
        ],
      },
      '[resource: file:///a.txt]\nA\nB',
    ],
    [
      'a blob resource as a placeholder with URI, MIME and size',
      {
        content: [
          {
            type: 'resource',
            resource: {
              uri: 'file:///x.bin',
              mimeType: 'application/octet-stream',
              blob: b64(3 * 1024 * 1024),
            },
          },
        ],
      },
      '[resource: file:///x.bin, application/octet-stream, 3 MB]',
    ],
    [
      'a blob resource without a MIME type',
      { content: [{ type: 'resource', resource: { uri: 'file:///x', blob: b64(2) } }] },
      '[resource: file:///x, unknown type, 2 B]',
    ],
    [
      'a resource_link as name and URI',
      { content: [{ type: 'resource_link', name: 'README', uri: 'file:///README.md' }] },
      '[resource link: README, file:///README.md]',
    ],
    [
      'a resource_link with MIME type and description',
      {
        content: [
          {
            type: 'resource_link',
            name: 'notes',
            uri: 'file:///n.md',
            mimeType: 'text/markdown',
            description: 'Meeting notes',
          },
        ],
      },
      '[resource link: notes, file:///n.md, text/markdown] Meeting notes',
    ],
    [
      'structuredContent as compact JSON when there is no text part',
      { content: [], structuredContent: { temperature: 21.5, unit: 'C' } },
      '{"temperature":21.5,"unit":"C"}',
    ],
    [
      'structuredContent after other non-text parts',
      { content: [{ type: 'image', data: b64(1), mimeType: 'image/gif' }], structuredContent: { a: 1 } },
      '[image: image/gif, 1 B]\n{"a":1}',
    ],
    [
      'only the text when a text part carries the structured result',
      { content: [{ type: 'text', text: '{"a":1}' }], structuredContent: { a: 1 } },
      '{"a":1}',
    ],
    ['structuredContent without a content array', { structuredContent: { a: 1 } }, '{"a":1}'],
    [
      'a part of an unknown type as a placeholder with its JSON',
      { content: [{ type: 'video', url: 'https://example.com/v.mp4' }] },
      '[unsupported content: video] {"type":"video","url":"https://example.com/v.mp4"}',
    ],
    [
      'a text part without text as an unknown part',
      { content: [{ type: 'text' }] },
      '[unsupported content: text] {"type":"text"}',
    ],
    ['strings and nulls inside content', { content: ['raw', null] }, 'raw\n[unsupported content: null] null'],
    [
      'mixed parts in order',
      {
        content: [
          { type: 'text', text: 'Found:' },
          { type: 'resource_link', name: 'a', uri: 'file:///a' },
          { type: 'text', text: 'end' },
        ],
      },
      'Found:\n[resource link: a, file:///a]\nend',
    ],
    [
      'an isError result prefixed with Error:',
      { isError: true, content: [{ type: 'text', text: 'file not found' }] },
      'Error: file not found',
    ],
    [
      'an isError result that already starts with Error: only once',
      { isError: true, content: [{ type: 'text', text: 'Error: file not found' }] },
      'Error: file not found',
    ],
    [
      'an isError result without details',
      { isError: true, content: [] },
      'Error: the tool reported an error without details',
    ],
    ['an isError plain { text }', { isError: true, text: 'boom' }, 'Error: boom'],
    ['a content array given directly', [{ type: 'text', text: 'x' }], 'x'],
    ['isError false as a normal result', { isError: false, content: [{ type: 'text', text: 'ok' }] }, 'ok'],
  ])('renders %s', (_label, input, expected) => {
    expect(mcpResultToString(input)).toBe(expected);
  });

  it('shows only the type of an unknown part whose JSON is long', () => {
    const text = mcpResultToString({ content: [{ type: 'video', data: 'x'.repeat(10_000) }] });
    expect(text).toMatch(/^\[unsupported content: video\] \(\d+ characters of JSON not shown\)$/);
  });

  it('never throws on values JSON cannot encode', () => {
    const circular: Record<string, unknown> = { a: 1 };
    circular.self = circular;
    expect(mcpResultToString({ result: circular })).toBe('[unserializable value]');
    expect(mcpResultToString({ result: { big: 10n } })).toBe('{"big":"10"}');
  });

  it('cuts results longer than maxResultChars with a notice of how much was cut', () => {
    const text = mcpResultToString('a'.repeat(150), { maxResultChars: 100 });
    expect(text.startsWith('a'.repeat(100))).toBe(true);
    expect(text.slice(100)).toBe('\n\n[result truncated: 50 of 150 characters cut]');
  });

  it('cuts at DEFAULT_MAX_RESULT_CHARS by default', () => {
    const text = mcpResultToString({
      content: [{ type: 'text', text: 'b'.repeat(DEFAULT_MAX_RESULT_CHARS + 7) }],
    });
    expect(text).toContain('[result truncated: 7 of 100007 characters cut]');
  });

  it('keeps results of exactly maxResultChars whole', () => {
    expect(mcpResultToString('x'.repeat(10), { maxResultChars: 10 })).toBe('x'.repeat(10));
  });

  it('joins text parts and plain strings with newlines, holes as empty lines, structured content only without text', () => {
    const part = fc.oneof(
      fc.string(),
      fc.record({ type: fc.constant('text' as const), text: fc.string() }),
      fc.constant(undefined),
    );
    fc.assert(
      fc.property(
        fc.array(fc.option(part, { nil: null }), { maxLength: 6 }),
        fc.option(fc.dictionary(fc.string({ maxLength: 4 }), fc.integer()), { nil: undefined }),
        (drawn, structured) => {
          // null marks a hole: the array is sparse there, as a native tool could return it.
          const content: unknown[] = [];
          content.length = drawn.length;
          drawn.forEach((p, i) => {
            if (p !== null) content[i] = p;
          });
          const lines = drawn.map((p) =>
            p === null ? '' : p === undefined ? 'undefined' : typeof p === 'string' ? p : p.text,
          );
          const hasText = drawn.some((p) => typeof p === 'string' || (p !== null && p !== undefined));
          if (!hasText && structured !== undefined) lines.push(JSON.stringify(structured));
          const text = mcpResultToString({ content, structuredContent: structured }, { maxResultChars: 1e9 });
          // An undefined part is shown by the unknown-part rule; only its position and the separators matter here.
          expect(text.split('\n').length).toBe(lines.join('\n').split('\n').length);
          if (!drawn.includes(undefined)) expect(text).toBe(lines.join('\n'));
        },
      ),
    );
  });

  it('never splits a surrogate pair when cutting', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 60 }),
        fc.integer({ min: 0, max: 60 }),
        (s, max) => {
          const text = mcpResultToString(s, { maxResultChars: max });
          if (s.length <= max) {
            expect(text).toBe(s);
            return;
          }
          const kept = text.slice(0, text.indexOf('\n\n[result truncated: '));
          expect(s.startsWith(kept)).toBe(true);
          expect(kept.length).toBeGreaterThanOrEqual(max - 1);
          expect(kept.length).toBeLessThanOrEqual(max);
          expect(text).toContain(
            `[result truncated: ${s.length - kept.length} of ${s.length} characters cut]`,
          );
          expect(/[\ud800-\udbff]$/.test(kept)).toBe(false);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('formatByteSize', () => {
  it.each([
    [0, '0 B'],
    [1023, '1023 B'],
    [1024, '1 KB'],
    [1229, '1.2 KB'],
    [1024 * 1024 - 1, '1 MB'],
    [5.5 * 1024 * 1024, '5.5 MB'],
    [3 * 1024 ** 3, '3 GB'],
    [-1, 'unknown size'],
    [Number.NaN, 'unknown size'],
  ])('formats %s bytes as %j', (bytes, expected) => {
    expect(formatByteSize(bytes)).toBe(expected);
  });

  it('computes the decoded size of base64 data of every length', () => {
    for (let n = 0; n < 40; n++) {
      const text = mcpResultToString({ content: [{ type: 'image', mimeType: 'image/png', data: b64(n) }] });
      expect(text).toBe(`[image: image/png, ${n} B]`);
    }
  });
});

describe('toToolCallResult', () => {
  it('keeps the text, the error flag, a copy of the content and the structured content', () => {
    const content = [{ type: 'text' as const, text: 'bad path' }];
    const raw = { isError: true, content, structuredContent: { code: 404 } };
    const result = toToolCallResult(raw);
    expect(result).toEqual({
      text: 'Error: bad path',
      isError: true,
      content: [{ type: 'text', text: 'bad path' }],
      structuredContent: { code: 404 },
    });
    expect(result.content).not.toBe(content);
  });

  it('wraps shapes without a content array in one text part', () => {
    expect(toToolCallResult({ result: 'ok' })).toEqual({
      text: 'ok',
      isError: false,
      content: [{ type: 'text', text: 'ok' }],
    });
    expect(toToolCallResult(null)).toEqual({ text: '', isError: false, content: [] });
  });

  it('applies maxResultChars to the text only', () => {
    const raw = { content: [{ type: 'text', text: 'z'.repeat(200) }] };
    const result = toToolCallResult(raw, { maxResultChars: 100 });
    expect(result.text).toContain('[result truncated: 100 of 200 characters cut]');
    expect(result.content).toEqual(raw.content);
  });

  it('leaves out structuredContent that is not an object', () => {
    expect('structuredContent' in toToolCallResult({ content: [], structuredContent: 'x' })).toBe(false);
  });

  it('does not change the raw result', () => {
    const raw = Object.freeze({
      isError: true,
      content: Object.freeze([Object.freeze({ type: 'text', text: 'x' })]),
    });
    expect(() => toToolCallResult(raw)).not.toThrow();
  });
});
