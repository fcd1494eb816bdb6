/**
 * The corpus of the differential test against the SDK (issue 43): hostile and malformed answers to `tools/call`,
 * each a script of frames the hostile fixture replays (see differential-harness.ts). A case is written once for
 * both eras: `rt` is what a well-formed result of the era carries (`resultType: "complete"` on 2026-07-28, nothing
 * on 2025-11-25).
 */
import { type Era, type Frame, SHORT_TIMEOUT_MS, type Wire } from './differential-harness.js';

export interface Case {
  readonly name: string;
  readonly tool: 'replay' | 'typed';
  frames(rt: Readonly<Record<string, unknown>>): Frame[];
  /** Only on this wire (a case about line framing means nothing on SSE). */
  readonly wire?: Wire;
  /** Only in this era. */
  readonly era?: Era;
  /** A case in which both sides wait for their timeout: a short one. */
  readonly timeoutMs?: number;
}

const text = (t: string) => ({ type: 'text', text: t });
const ok = (rt: object, t = 'ok') => ({ result: { content: [text(t)], ...rt } });

export const CORPUS: readonly Case[] = [
  { name: 'a plain text result', tool: 'replay', frames: (rt) => [ok(rt, 'hi')] },
  {
    name: 'every kind of content block, with annotations',
    tool: 'replay',
    frames: (rt) => [
      {
        result: {
          content: [
            { ...text('a'), annotations: { audience: ['user'], priority: 0.5 } },
            { type: 'image', data: 'aGk=', mimeType: 'image/png' },
            { type: 'audio', data: 'aGk=', mimeType: 'audio/wav' },
            { type: 'resource_link', uri: 'file:///a.txt', name: 'a' },
            { type: 'resource', resource: { uri: 'file:///b.txt', text: 'b', mimeType: 'text/plain' } },
            { type: 'resource', resource: { uri: 'file:///c.bin', blob: 'aGk=' } },
          ],
          ...rt,
        },
      },
    ],
  },
  {
    name: 'isError true',
    tool: 'replay',
    frames: (rt) => [{ result: { content: [text('boom')], isError: true, ...rt } }],
  },
  {
    name: 'isError as the string "true"',
    tool: 'replay',
    frames: (rt) => [{ result: { content: [text('x')], isError: 'true', ...rt } }],
  },
  {
    name: 'content that is not an array',
    tool: 'replay',
    frames: (rt) => [{ result: { content: 'x', ...rt } }],
  },
  { name: 'no content at all', tool: 'replay', frames: (rt) => [{ result: { ...rt } }] },
  {
    name: 'a block of an unknown type',
    tool: 'replay',
    frames: (rt) => [{ result: { content: [{ type: 'hologram', data: 1 }], ...rt } }],
  },
  {
    name: 'a text block without its text',
    tool: 'replay',
    frames: (rt) => [{ result: { content: [{ type: 'text' }], ...rt } }],
  },
  {
    name: 'a text block whose text is a number',
    tool: 'replay',
    frames: (rt) => [{ result: { content: [{ type: 'text', text: 5 }], ...rt } }],
  },
  {
    name: 'an image block without data',
    tool: 'replay',
    frames: (rt) => [{ result: { content: [{ type: 'image', mimeType: 'image/png' }], ...rt } }],
  },
  {
    name: 'a block that is not an object',
    tool: 'replay',
    frames: (rt) => [{ result: { content: ['just a string'], ...rt } }],
  },
  {
    name: 'extra fields on the result and on a block',
    tool: 'replay',
    frames: (rt) => [{ result: { content: [{ ...text('a'), extra: 1 }], extra: { a: [1] }, ...rt } }],
  },
  {
    name: 'structuredContent from a tool without an output schema',
    tool: 'replay',
    frames: (rt) => [{ result: { content: [], structuredContent: { a: 1 }, ...rt } }],
  },
  {
    name: 'structuredContent that is an array',
    tool: 'replay',
    frames: (rt) => [{ result: { content: [], structuredContent: [1, 2], ...rt } }],
  },
  {
    name: 'structuredContent that matches the output schema',
    tool: 'typed',
    frames: (rt) => [{ result: { content: [text('{"n":1}')], structuredContent: { n: 1 }, ...rt } }],
  },
  {
    name: 'structuredContent that does not match the output schema',
    tool: 'typed',
    frames: (rt) => [{ result: { content: [], structuredContent: { n: 'one' }, ...rt } }],
  },
  {
    name: 'structuredContent without a field the output schema requires',
    tool: 'typed',
    frames: (rt) => [{ result: { content: [], structuredContent: { m: 1 }, ...rt } }],
  },
  {
    name: 'no structuredContent from a tool with an output schema',
    tool: 'typed',
    frames: (rt) => [ok(rt)],
  },
  {
    name: 'an error result without structuredContent from a tool with an output schema',
    tool: 'typed',
    frames: (rt) => [{ result: { content: [text('failed')], isError: true, ...rt } }],
  },
  {
    name: 'an error and a result in one answer (not an answer: both time out)',
    tool: 'replay',
    timeoutMs: SHORT_TIMEOUT_MS,
    frames: (rt) => [{ message: { error: { code: 1, message: 'both' }, result: { content: [], ...rt } } }],
  },
  {
    name: 'a JSON-RPC error with data',
    tool: 'replay',
    frames: () => [{ error: { code: -32602, message: 'bad arguments', data: { field: 'x' } } }],
  },
  {
    name: 'a JSON-RPC error with a server-defined code',
    tool: 'replay',
    frames: () => [{ error: { code: -32000, message: 'backend down' } }],
  },
  {
    name: 'a result that is a string (not an answer: both time out)',
    tool: 'replay',
    timeoutMs: SHORT_TIMEOUT_MS,
    frames: () => [{ result: 'done' }],
  },
  {
    name: 'a result that is an array (not an answer: both time out)',
    tool: 'replay',
    timeoutMs: SHORT_TIMEOUT_MS,
    frames: () => [{ result: [text('a')] }],
  },
  {
    name: 'an answer to an unknown id, then the real one',
    tool: 'replay',
    frames: (rt) => [{ ...ok(rt, 'stray'), id: 987654 }, ok(rt, 'real')],
  },
  {
    name: 'an answer with a null id, then the real one',
    tool: 'replay',
    frames: (rt) => [{ ...ok(rt, 'stray'), id: null }, ok(rt, 'real')],
  },
  {
    name: 'the same answer twice with different values (the first one counts)',
    tool: 'replay',
    frames: (rt) => [ok(rt, 'first'), ok(rt, 'second')],
  },
  {
    name: 'notifications interleaved before the answer',
    tool: 'replay',
    frames: (rt) => [
      { notify: 'notifications/progress', params: { progressToken: 'nobody', progress: 1 } },
      { notify: 'notifications/message', params: { level: 'info', data: 'working' } },
      { notify: 'notifications/unknown/thing', params: { a: 1 } },
      ok(rt, 'after notes'),
    ],
  },
  {
    name: 'a request to the client interleaved before the answer',
    tool: 'replay',
    frames: (rt) => [{ request: 'ping' }, ok(rt, 'after ping')],
  },
  {
    name: 'a line that is not JSON before the answer',
    tool: 'replay',
    wire: 'stdio',
    frames: (rt) => [{ raw: 'this is a log line, not JSON\n' }, ok(rt, 'after noise')],
  },
  {
    name: 'an answer split across two writes',
    tool: 'replay',
    wire: 'stdio',
    frames: (rt) => {
      const line = JSON.stringify({ jsonrpc: '2.0', id: '$ID', result: { content: [text('split')], ...rt } });
      return [{ raw: line.slice(0, 20) }, { raw: `${line.slice(20)}\n` }];
    },
  },
  {
    name: 'a 5 MB text result',
    tool: 'replay',
    frames: () => [{ bigText: 5 * 1024 * 1024 }],
  },
  {
    name: 'structuredContent nested 2000 levels deep',
    tool: 'replay',
    frames: () => [{ deepStructured: 2000 }],
  },
  {
    name: 'a resultType nobody knows',
    tool: 'replay',
    era: '2026-07-28',
    frames: () => [{ result: { content: [text('x')], resultType: 'hologram' } }],
  },
  {
    name: 'a result that is null (not an answer: both time out)',
    tool: 'replay',
    timeoutMs: SHORT_TIMEOUT_MS,
    frames: () => [{ result: null }],
  },
  {
    name: 'an error whose code is a string (not an answer: both time out)',
    tool: 'replay',
    timeoutMs: SHORT_TIMEOUT_MS,
    frames: () => [{ error: { code: 'E1', message: 'x' } }],
  },
  {
    name: 'an error without a message (not an answer: both time out)',
    tool: 'replay',
    timeoutMs: SHORT_TIMEOUT_MS,
    frames: () => [{ error: { code: -32000 } }],
  },
  {
    name: 'no answer at all (both time out)',
    tool: 'replay',
    timeoutMs: SHORT_TIMEOUT_MS,
    frames: () => [],
  },
  {
    name: 'a result whose _meta names the server with a malformed serverInfo',
    tool: 'replay',
    // The SDK's transport drops the malformed serverInfo; Interlock's stdio shape check passes it on (issue 43).
    // The result's `_meta` is not part of Interlock's public result, so through public entry points the two agree.
    frames: (rt) => [
      {
        result: {
          content: [text('x')],
          _meta: { 'io.modelcontextprotocol/serverInfo': { name: 42 } },
          ...rt,
        },
      },
    ],
  },
];
