// The gateway's HTTP surface under generated hostile requests (issue 38, "Beyond the findings"). fast-check
// builds each request as data (method, path, headers with duplicates, odd casing, huge and non-ASCII values,
// bodies that are invalid JSON, deeply nested, huge, batches or wrong JSON-RPC shapes, content types and
// encodings, framing); a raw socket sends its exact bytes to a real listener in front of a real upstream
// server. For every request: no 5xx, a 4xx when the front door must refuse it, and nothing in the upstream's own
// request log that the request was not entitled to. fast-check because the input is a structure whose parts
// combine, and a failure shrinks to the smallest request that shows it.
import { connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Gateway } from '../../src/gateway/gateway.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { createFixtureLog, type FixtureLog, nodeFixture } from '../helpers/index.js';

const ALICE_KEY = 'alice-key-0123456789abcdef';
/** A valid key whose bindings allow nothing. */
const BOB_KEY = 'bob-key-0123456789abcdef01';
const MARK = '__MARK__';

let log: FixtureLog;
let manager: MCPClientManager;
let gateway: Gateway;
let port: number;

beforeAll(async () => {
  log = createFixtureLog();
  manager = new MCPClientManager({
    capabilities: CapabilitySet.fromPolicy({
      version: 1,
      rules: [
        { effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'] },
        { effect: 'allow', resource: 'mcp:echo:add', actions: ['execute'] },
      ],
    }),
  });
  await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo'), env: log.env });
  gateway = new Gateway({
    manager,
    config: {
      auth: {
        apiKeys: [
          { key: ALICE_KEY, subject: 'alice' },
          { key: BOB_KEY, subject: 'bob' },
        ],
      },
      principals: [
        {
          match: { apiKey: { subjects: ['alice'] } },
          rules: [{ effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'] }],
        },
        { match: { apiKey: { subjects: ['bob'] } }, rules: [] },
      ],
      http: { port: 0 },
    },
  });
  ({ port } = await gateway.listen());
});

afterAll(async () => {
  await gateway?.close();
  await manager?.close();
  await log?.close();
});

type Header = [name: string, value: string];

interface Probe {
  method: string;
  path: string;
  host: 'own' | 'localhost' | 'evil' | 'none' | 'twice';
  origin: string | undefined;
  authorization: string[];
  headers: Header[];
  body: string;
  framing: 'length' | 'chunked' | 'both';
}

/** A header name in random letter case (header names are case-insensitive; parsers must agree). */
const oddCase = (name: string) =>
  fc
    .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
    .map((upper) => [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''));

const token = fc.constantFrom(ALICE_KEY, BOB_KEY, 'not-a-key-0123456789', '');
const authorization: fc.Arbitrary<string[]> = fc.oneof(
  { weight: 10, arbitrary: fc.constant<string[]>([`Bearer ${ALICE_KEY}`]) },
  fc.constant([] as string[]),
  token.map((t) => [`Bearer ${t}`]),
  token.map((t) => [`bearer ${t}`]),
  fc.constant<string[]>([`Bearer ${ALICE_KEY}`, `Bearer ${ALICE_KEY}`]),
  fc.tuple(token, token).map(([a, b]) => [`Bearer ${a}`, `Bearer ${b}`]),
  token.map((t) => [`Bearer ${t} junk`]),
  fc.tuple(token, token).map(([a, b]) => [`Bearer ${a}, Bearer ${b}`]),
  token.map((t) => [`Bearer  ${t}`]),
  token.map((t) => [`Basic ${t}`]),
  fc.string({ maxLength: 60, unit: 'binary' }).map((s) => [s]),
);

const rpcId = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 8 }),
  fc.constant(null),
  fc.object({ maxDepth: 1 }),
);
const toolName = fc.constantFrom('mcp__echo__echo', 'mcp__echo__add', 'echo', 'mcp__echo__missing', '');
const rpc = fc.record(
  {
    jsonrpc: fc.constantFrom('2.0', '1.0', 2),
    id: rpcId,
    method: fc.constantFrom(
      'tools/call',
      'tools/call',
      'tools/list',
      'initialize',
      'ping',
      'resources/read',
      'prompts/get',
      'notifications/initialized',
      'server/discover',
      'nope',
    ),
    params: fc.oneof(
      fc.record({ name: toolName, arguments: fc.constant({ text: MARK, a: 1, b: 2 }) }),
      fc.constant(null),
      fc.json({ maxDepth: 2 }).map((j) => JSON.parse(j) as unknown),
    ),
  },
  { requiredKeys: ['method'] },
);
/** A well-formed call of a tool: most bodies, so that the property reaches the gate and the upstream. */
const call = fc.record({ id: fc.integer({ min: 1 }), name: toolName }).map(({ id, name }) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: { text: MARK, a: 1, b: 2 } },
  }),
);
const body = fc.oneof(
  { weight: 8, arbitrary: call },
  { weight: 5, arbitrary: rpc.map((m) => JSON.stringify(m)) },
  { weight: 2, arbitrary: fc.array(rpc, { maxLength: 4 }).map((b) => JSON.stringify(b)) },
  { weight: 1, arbitrary: fc.json({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 200, unit: 'binary' }) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1_000, max: 200_000 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1_000, max: 50_000 }).map((n) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 100_000, max: 2_000_000 }).map((n) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'mcp__echo__echo', arguments: { text: `${MARK}${'x'.repeat(n)}` } },
      }),
    ),
  },
  { weight: 1, arbitrary: fc.constant('') },
);

/** Mostly `usual` (so that most requests get far enough to test what lies behind), else one of `others`. */
const mostly = <T>(usual: T, ...others: T[]) =>
  fc.oneof(
    { weight: 5, arbitrary: fc.constant(usual) },
    { weight: 1, arbitrary: fc.constantFrom(...others) },
  );

/** A header: mostly its usual value (`undefined`: absent), sometimes absent, sometimes a hostile value. */
const header = (
  name: string,
  usual: string | undefined,
  hostile: fc.Arbitrary<string>,
): fc.Arbitrary<Header | undefined> =>
  fc
    .oneof(
      { weight: 6, arbitrary: fc.constant(usual) },
      { weight: 1, arbitrary: fc.constant(undefined) },
      { weight: 2, arbitrary: hostile },
    )
    .chain((value) =>
      value === undefined ? fc.constant(undefined) : oddCase(name).map((n): Header => [n, value]),
    );

const probe: fc.Arbitrary<Probe> = fc.record({
  method: mostly('POST', 'GET', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'HEAD', 'BREW'),
  path: mostly(
    '/mcp',
    '/mcp?x=1',
    '/MCP',
    '/mcp/',
    '//mcp',
    '/%6dcp',
    '/mcp/../metrics',
    '/metrics',
    '/readyz',
    '/healthz',
    '/.well-known/oauth-protected-resource/mcp',
    '*',
  ),
  host: mostly<Probe['host']>('own', 'localhost', 'evil', 'none', 'twice'),
  origin: mostly<string | undefined>(
    undefined,
    'https://evil.example',
    'null',
    'http://localhost:5173',
    'http://127.0.0.1.evil.example',
  ),
  authorization,
  headers: fc
    .tuple(
      header(
        'content-type',
        'application/json',
        fc.constantFrom(
          'APPLICATION/JSON; charset=utf-16',
          'text/plain',
          'multipart/form-data; boundary=x',
          'application/x-www-form-urlencoded',
        ),
      ),
      header(
        'accept',
        'application/json, text/event-stream',
        fc.constantFrom('text/event-stream', '*/*', 'application/json'),
      ),
      header('content-encoding', undefined, fc.constantFrom('gzip', 'br', 'identity', 'x-unknown')),
      header('mcp-protocol-version', '2025-11-25', fc.constantFrom('2026-07-28', '1999-01-01', 'junk')),
      header('mcp-method', undefined, fc.constantFrom('tools/call', 'tools/list', 'nope')),
      header(
        'x-huge',
        undefined,
        fc.integer({ min: 1_000, max: 40_000 }).map((n) => 'h'.repeat(n)),
      ),
      header('x-non-ascii', undefined, fc.string({ minLength: 1, maxLength: 40, unit: 'binary' })),
      header('x-latin', undefined, fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' })),
    )
    .map((hs) => hs.filter((h): h is Header => h !== undefined)),
  body,
  framing: mostly<Probe['framing']>('length', 'chunked', 'both'),
});

/** The exact bytes of a probe, with `marker` in place of {@link MARK}. */
function wire(p: Probe, marker: string): Buffer {
  const payload = Buffer.from(p.body.replaceAll(MARK, marker));
  const lines = [`${p.method} ${p.path} HTTP/1.1`];
  const own = `127.0.0.1:${port}`;
  if (p.host === 'own') lines.push(`Host: ${own}`);
  if (p.host === 'localhost') lines.push(`host: localhost:${port}`);
  if (p.host === 'evil') lines.push(`Host: evil.example:${port}`);
  if (p.host === 'twice') lines.push(`Host: ${own}`, 'Host: evil.example');
  if (p.origin !== undefined) lines.push(`Origin: ${p.origin}`);
  for (const value of p.authorization) lines.push(`Authorization: ${value}`);
  for (const [name, value] of p.headers) lines.push(`${name}: ${value.replace(/[\r\n]/g, ' ')}`);
  lines.push('Connection: close');
  if (p.framing !== 'chunked') lines.push(`Content-Length: ${payload.length}`);
  if (p.framing !== 'length') lines.push('Transfer-Encoding: chunked');
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`);
  if (p.framing === 'length') return Buffer.concat([head, payload]);
  const chunk =
    payload.length === 0
      ? Buffer.alloc(0)
      : Buffer.concat([Buffer.from(`${payload.length.toString(16)}\r\n`), payload, Buffer.from('\r\n')]);
  return Buffer.concat([head, chunk, Buffer.from('0\r\n\r\n')]);
}

/** Whether `received` holds a whole answer (a server may keep the connection open after it). */
function complete(received: Buffer, head: boolean): boolean {
  const text = received.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return false;
  if (head) return true;
  const headers = text.slice(0, end).toLowerCase();
  const body = text.slice(end + 4);
  const length = /\r\ncontent-length: *(\d+)/.exec(headers)?.[1];
  if (length !== undefined) return body.length >= Number(length);
  if (/\r\ntransfer-encoding: *chunked/.test(headers)) return body.endsWith('0\r\n\r\n');
  return false;
}

/** Sends the bytes and reads the whole answer: its status (0 when the server closed without one) and text. */
function send(bytes: Buffer, head = false): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const done = () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1];
      resolve({ status: status === undefined ? 0 : Number(status), text });
    };
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      if (complete(Buffer.concat(chunks), head)) {
        socket.destroy();
        done();
      }
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // The server may refuse mid-upload (a huge header or body) and reset the connection after answering.
      if (err.code === 'ECONNRESET' || err.code === 'EPIPE') return;
      reject(err);
    });
    socket.on('close', done);
    // No half-close: a server may take the end of the client's stream as the end of its interest in the answer.
    socket.write(bytes);
  });
}

/** Whether the front door must let the request reach the MCP endpoint as alice, the one caller with a tool. */
function entitled(p: Probe): boolean {
  return (
    p.method === 'POST' &&
    (p.path === '/mcp' || p.path === '/mcp?x=1') &&
    (p.host === 'own' || p.host === 'localhost') &&
    (p.origin === undefined || p.origin === 'http://localhost:5173') &&
    p.authorization.length === 1 &&
    /^bearer /i.test(p.authorization[0] ?? '') &&
    p.authorization[0]?.slice('Bearer '.length) === ALICE_KEY
  );
}

/** What the front door must refuse before any route: a Host or Origin that is not ours. */
function screenedOut(p: Probe): boolean {
  const badOrigin = p.origin !== undefined && p.origin !== 'http://localhost:5173';
  return p.host === 'evil' || p.host === 'none' || p.host === 'twice' || badOrigin;
}

const reached = (marker: string) =>
  log.toolCalls().filter((c) => JSON.stringify(c.args ?? {}).includes(marker));

describe('the HTTP surface under hostile requests', () => {
  it('never answers 5xx, refuses what it must with a 4xx, and lets through to the upstream only what the caller may do', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(probe, async (p) => {
        const marker = `probe-${++n}-${Date.now()}`;
        const { status, text } = await send(wire(p, marker), p.method === 'HEAD');
        expect(status, 'the server answers every request').toBeGreaterThan(0);
        expect(status, 'no 5xx for bad input').toBeLessThan(500);
        if (screenedOut(p)) expect(status, 'a foreign Host or Origin is refused').toBeGreaterThanOrEqual(400);
        if (p.path === '/mcp' && p.authorization.length > 1) {
          expect(status, 'two credentials are refused').toBeGreaterThanOrEqual(400);
        }
        // No principal is an operator here: no request may read the metrics.
        expect(text).not.toContain('interlock_gateway_calls_total');
        const arrived = reached(marker);
        if (!entitled(p))
          expect(arrived, 'a call the request was not entitled to reached upstream').toEqual([]);
        for (const call of arrived) expect(call.tool).toBe('echo');
      }),
      { numRuns: 150, endOnFailure: true },
    );
    // Still serving, and a well-formed call still arrives.
    const { status, text } = await send(
      wire(
        {
          method: 'POST',
          path: '/mcp',
          host: 'own',
          origin: undefined,
          authorization: [`Bearer ${ALICE_KEY}`],
          headers: [
            ['content-type', 'application/json'],
            ['accept', 'application/json, text/event-stream'],
            ['mcp-protocol-version', '2025-11-25'],
          ],
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'mcp__echo__echo', arguments: { text: MARK } },
          }),
          framing: 'length',
        },
        'final-probe',
      ),
    );
    expect(status).toBe(200);
    expect(text).toContain('final-probe');
    expect(reached('final-probe')).toHaveLength(1);
  }, 120_000);
});
