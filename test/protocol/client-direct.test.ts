/**
 * Issue 15, the lean hot path: `InterlockClient.callTool` sends `tools/call` itself, outside the SDK's request
 * funnel, when given a tool definition without an output schema. It must still be the SDK's client in every way a
 * caller can see: results, progress, the timeout progress resets, `maxTotalTimeout`, the caller's abort (and the
 * cancellation the server receives), JSON-RPC errors, a connection that closes mid-call, and (2026-07-28) an
 * `input_required` answer. Every case runs the stock SDK `Client` and `InterlockClient` side by side against the
 * same real server process, in both protocol eras, and compares what they settle with.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  Client,
  PROTOCOL_VERSION_META_KEY,
  SdkError,
  SERVER_INFO_META_KEY,
  TRACEPARENT_META_KEY,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InterlockClient } from '../../src/protocol/client.js';
import { plainTextResult, withMeta } from '../../src/protocol/results.js';
import { TASKS_EXTENSION } from '../../src/protocol/task-handles.js';
import { createFixtureLog, type FixtureName, nodeFixture } from '../helpers/fixtures.js';
import { CONDITION_TIMEOUT_MS } from '../helpers/wait.js';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const identity = { name: 'client-direct-test', version: '1.0.0' };
const clientOptions = { capabilities: {}, versionNegotiation: { mode: 'auto' as const } };
/** What the call path hands over: a definition without an outputSchema, so the SDK would validate nothing more. */
const toolDefinition = { name: 'any', inputSchema: { type: 'object' as const } };

async function pair(
  server: FixtureName,
  env?: Record<string, string>,
  options: ConstructorParameters<typeof Client>[1] = clientOptions,
) {
  const open = async <C extends Client>(client: C) => {
    const transport = new StdioClientTransport({
      ...nodeFixture(server),
      ...(env === undefined ? {} : { env: { ...(process.env as Record<string, string>), ...env } }),
    });
    await client.connect(transport);
    closers.push(() => client.close());
    return client;
  };
  const stock = await open(new Client(identity, options));
  const ours = await open(new InterlockClient(identity, options));
  return { stock, ours };
}

/** How a call settled, in the terms a caller sees: the value, or the error's class, message, code and data. */
async function outcome(call: Promise<unknown>) {
  try {
    return { value: await call };
  } catch (err) {
    const e = err as Error & { code?: unknown; data?: unknown };
    return { error: { type: e.constructor.name, message: e.message, code: e.code, data: e.data } };
  }
}

const eras = [
  { era: 'legacy', server: 'echo' },
  { era: 'modern', server: 'modern' },
] as const;

describe.each(eras)('the direct tools/call path on a $era server', ({ era, server }) => {
  it('answers as the SDK client does, and is the path taken', async () => {
    const { stock, ours } = await pair(server);
    expect(ours.getProtocolEra()).toBe(era);
    const call = { name: 'echo', arguments: { text: 'hi' } };
    const expected = await stock.callTool(call, { toolDefinition });
    for (let i = 0; i < 3; i++) expect(await ours.callTool(call, { toolDefinition })).toEqual(expected);
    // If a new SDK drops a member the path relies on, calls fall back to the SDK's path and this fails.
    expect(ours.directCalls).toBe(3);
    expect(ours.resultChecksReused).toBe(true);
  });

  it(
    era === 'modern' ? 'builds its _meta envelope once, not per message' : 'sends no _meta envelope',
    async () => {
      const { ours } = await pair(server);
      const envelopeOf = () =>
        (
          ours as unknown as { _outboundMetaEnvelope(): Record<string, unknown> | undefined }
        )._outboundMetaEnvelope();
      if (era === 'legacy') {
        expect(envelopeOf()).toBeUndefined();
        return;
      }
      const first = envelopeOf();
      await ours.callTool({ name: 'echo', arguments: { text: 'hi' } }, { toolDefinition });
      // The same frozen object for every message while the SDK's entries are the same; the server got it (a 2026-07-28
      // server refuses a request without the envelope's required keys).
      expect(envelopeOf()).toBe(first);
      expect(Object.isFrozen(first)).toBe(true);
      expect(first).toMatchObject({
        [PROTOCOL_VERSION_META_KEY]: ours.getNegotiatedProtocolVersion(),
        [CLIENT_CAPABILITIES_META_KEY]: { extensions: { [TASKS_EXTENSION]: {} } },
      });
    },
  );

  it('delivers progress, which resets the timeout, as the SDK client does', async () => {
    const { stock, ours } = await pair(server);
    // Four steps 300 ms apart outlast an 800 ms timeout only because each one resets it (gaps well under the
    // timeout, so a loaded machine does not time the call out between two steps).
    const call = { name: 'progress', arguments: { steps: 4, intervalMs: 300 } };
    const run = async (client: Client) => {
      const seen: unknown[] = [];
      const result = await outcome(
        client.callTool(call, {
          toolDefinition,
          timeout: 800,
          resetTimeoutOnProgress: true,
          onprogress: (p) => seen.push(p),
        }),
      );
      return { result, seen };
    };
    const expected = await run(stock);
    // It finished: the progress reset the timeout.
    expect(expected.result.error).toBeUndefined();
    expect(expected.result.value).toMatchObject({
      content: [{ type: 'text', text: expect.stringMatching(/done/) }],
    });
    expect(expected.seen).toHaveLength(4);
    expect(await run(ours)).toEqual(expected);
    expect(ours.directCalls).toBe(1);
  });

  it("sends the caller's _meta with a progress token, as the SDK client does, and leaves the caller's objects alone", async () => {
    const { stock, ours } = await pair(server);
    const metaOf = async (client: Client) => {
      const meta = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tenant: 'a' };
      const call = { name: 'request_meta', arguments: {}, _meta: meta };
      const result = await client.callTool(call, { toolDefinition, onprogress: () => {} });
      // The caller's params and _meta are as they were: the token went into a copy.
      expect(call._meta).toBe(meta);
      expect(meta).toEqual({ traceparent: meta.traceparent, tenant: 'a' });
      const [content] = (result as { content: { text: string }[] }).content;
      return JSON.parse(content!.text) as Record<string, unknown>;
    };
    const expected = await metaOf(stock);
    const received = await metaOf(ours);
    expect(received).toMatchObject({
      traceparent: expect.any(String),
      tenant: 'a',
      progressToken: expect.any(Number),
    });
    // Each client numbers its own requests: the token is the request's id, whatever its value.
    expect({ ...received, progressToken: 0 }).toEqual({ ...expected, progressToken: 0 });
    expect(ours.directCalls).toBe(1);
  });

  it('ends a call at maxTotalTimeout even while progress keeps coming, with the SDK error', async () => {
    const { stock, ours } = await pair(server);
    const call = { name: 'progress', arguments: { steps: 20, intervalMs: 40 } };
    const options = {
      toolDefinition,
      timeout: 5_000,
      maxTotalTimeout: 150,
      resetTimeoutOnProgress: true,
      onprogress() {},
    };
    const strip = (o: Awaited<ReturnType<typeof outcome>>) => ({
      ...o,
      error: o.error && {
        ...o.error,
        data: { maxTotalTimeout: (o.error.data as { maxTotalTimeout: number }).maxTotalTimeout },
      },
    });
    const expected = strip(await outcome(stock.callTool(call, options)));
    expect(expected.error?.message).toMatch(/Maximum total timeout exceeded/);
    expect(strip(await outcome(ours.callTool(call, options)))).toEqual(expected);
    expect(ours.directCalls).toBe(1);
  });

  it('times out with the SDK error and tells the server to stop', async () => {
    await using log = createFixtureLog();
    const { stock, ours } = await pair(server, log.env);
    const call = { name: 'slow', arguments: { ms: 10_000 } };
    const expected = await outcome(stock.callTool(call, { toolDefinition, timeout: 100 }));
    expect(expected.error?.type).toBe('SdkError');
    expect(await outcome(ours.callTool(call, { toolDefinition, timeout: 100 }))).toEqual(expected);
    // Both servers saw their request cancelled (both clients share the log file). Two other processes have to
    // read the cancellation and write the log: on a loaded machine that takes longer than waitFor's default second.
    await vi.waitFor(() => expect(log.entries().filter((e) => e.event === 'aborted')).toHaveLength(2), {
      timeout: CONDITION_TIMEOUT_MS,
    });
  });

  it("rejects with the caller's abort reason, before sending when already aborted", async () => {
    const { stock, ours } = await pair(server);
    const call = { name: 'slow', arguments: { ms: 10_000 } };
    const abortSoon = (client: Client) => {
      const controller = new AbortController();
      // Once the request is on its way (the next turn of the event loop), not after a fixed delay.
      setImmediate(() => controller.abort(new SdkError(-32001 as never, 'stopped by the caller')));
      return outcome(client.callTool(call, { toolDefinition, signal: controller.signal }));
    };
    const expected = await abortSoon(stock);
    expect(expected.error?.message).toBe('stopped by the caller');
    expect(await abortSoon(ours)).toEqual(expected);

    const aborted = AbortSignal.abort('already gone');
    const before = await outcome(stock.callTool(call, { toolDefinition, signal: aborted }));
    expect(await outcome(ours.callTool(call, { toolDefinition, signal: aborted }))).toEqual(before);
    expect(before.error?.message).toBe('already gone');
  });

  it('keeps a slow call while hundreds of newer ones come and go, and settles each with its own answer', async () => {
    const { ours } = await pair(server);
    // The slow call's slot would be wanted again by a call 64 ids later: the table grows instead of mixing them up.
    const slow = ours.callTool({ name: 'slow', arguments: { ms: 1_500 } }, { toolDefinition });
    const texts = Array.from({ length: 300 }, (_, i) => `call ${i}`);
    const answers = await Promise.all(
      texts.map((text) => ours.callTool({ name: 'echo', arguments: { text } }, { toolDefinition })),
    );
    expect(answers.map((a) => (a as { content: { text: string }[] }).content[0]?.text)).toEqual(
      texts.map((text) => expect.stringContaining(text)),
    );
    expect(await outcome(slow)).toEqual({ value: expect.objectContaining({ content: expect.any(Array) }) });
    expect(ours.directCalls).toBe(301);
  });

  it("times out a short call sent after a long one at its own deadline, not the first call's", async () => {
    const { ours } = await pair(server);
    const settled: string[] = [];
    // One timer watches every call's deadline: the short call's must move it earlier.
    const long = ours
      .callTool({ name: 'slow', arguments: { ms: 1_000 } }, { toolDefinition, timeout: 30_000 })
      .then(() => settled.push('long answered'));
    const short = await outcome(
      ours
        .callTool({ name: 'slow', arguments: { ms: 10_000 } }, { toolDefinition, timeout: 100 })
        .finally(() => settled.push('short timed out')),
    );
    expect(short.error).toMatchObject({
      type: 'SdkError',
      message: expect.stringMatching(/Request timed out/),
    });
    await long;
    expect(settled).toEqual(['short timed out', 'long answered']);
    expect(ours.directCalls).toBe(2);
  });

  it('keeps the process alive with a timer only while a call is in flight', async () => {
    const { ours } = await pair(server);
    // Ref'd timers, as the process counts them: an unref'd one does not keep it alive.
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const idle = timers();
    const slow = ours.callTool({ name: 'slow', arguments: { ms: 200 } }, { toolDefinition });
    expect(timers()).toBe(idle + 1);
    await slow;
    expect(timers()).toBe(idle);
    // The next call arms it again; a second call in flight shares it.
    const calls = [1, 2].map(() =>
      ours.callTool({ name: 'slow', arguments: { ms: 200 } }, { toolDefinition }),
    );
    expect(timers()).toBe(idle + 1);
    await Promise.all(calls);
    expect(timers()).toBe(idle);
  });

  it('settles a call in flight when the connection closes, with the SDK error', async () => {
    const { stock, ours } = await pair(server);
    const call = { name: 'slow', arguments: { ms: 10_000 } };
    const closeSoon = (client: Client) => {
      setImmediate(() => void client.close());
      return outcome(client.callTool(call, { toolDefinition }));
    };
    const expected = await closeSoon(stock);
    expect(expected.error?.message).toMatch(/Connection closed/);
    expect(await closeSoon(ours)).toEqual(expected);
  });
});

describe('the direct tools/call path and what only one era has', () => {
  it('rejects a JSON-RPC error answer with the SDK ProtocolError (2025-11-25)', async () => {
    const { stock, ours } = await pair('echo');
    const call = { name: 'throw', arguments: { message: 'no such row', code: -32602 } };
    const expected = await outcome(stock.callTool(call, { toolDefinition }));
    expect(expected.error).toMatchObject({ type: 'ProtocolError', code: -32602 });
    expect(await outcome(ours.callTool(call, { toolDefinition }))).toEqual(expected);
    expect(ours.directCalls).toBe(1);
  });

  it('returns an input_required answer, or lets the SDK driver answer it, as the SDK client does (2026-07-28)', async () => {
    const { stock, ours } = await pair('modern', undefined, {
      ...clientOptions,
      capabilities: { elicitation: { form: {} } },
    });
    for (const client of [stock, ours]) {
      client.setRequestHandler('elicitation/create', async () => ({
        action: 'accept',
        content: { name: 'Ada' },
      }));
    }
    const call = { name: 'ask', arguments: {} };
    const manual = { toolDefinition, allowInputRequired: true };
    const expected = await outcome(stock.callTool(call, manual));
    expect(expected.value).toMatchObject({ resultType: 'input_required' });
    expect(await outcome(ours.callTool(call, manual))).toEqual(expected);
    // Without allowInputRequired the SDK's driver asks the handler and sends the next leg itself.
    const driven = await outcome(stock.callTool(call, { toolDefinition }));
    expect(JSON.stringify(driven.value)).toMatch(/Ada/);
    expect(await outcome(ours.callTool(call, { toolDefinition }))).toEqual(driven);
    expect(ours.directCalls).toBe(2);
  });

  it('leaves to the SDK a call without a definition, with an output schema, or with options it does not know', async () => {
    const { ours } = await pair('echo');
    const call = { name: 'echo', arguments: { text: 'hi' } };
    await ours.callTool(call);
    // The SDK validates structured output against the schema (here: there is none, so it refuses the answer).
    const withSchema = { ...toolDefinition, outputSchema: { type: 'object' as const } };
    expect((await outcome(ours.callTool(call, { toolDefinition: withSchema }))).error?.message).toMatch(
      /has an output schema but did not return structured content/,
    );
    await ours.callTool(call, { toolDefinition, headers: { 'x-extra': '1' } } as never);
    expect(ours.directCalls).toBe(0);
  });
});

describe('the shape check for plain text results', () => {
  /** The era codec a connected client reads answers with: `decodeResult` then `validateResult`, as the SDK does. */
  interface Codec {
    era: string;
    decodeResult(method: string, raw: unknown): { kind: string; result?: unknown };
    validateResult(method: string, raw: unknown): { ok: boolean; value?: unknown };
  }
  const codecOf = (client: Client) => (client as unknown as { _wireCodec(): Codec })._wireCodec();

  it.each(eras)(
    "returns, on a $era server, only what the era's codec returns for the same answer",
    async ({ era, server }) => {
      const { ours } = await pair(server);
      const codec = codecOf(ours);
      expect(ours.getProtocolEra()).toBe(era);
      const text = fc.record({ type: fc.constant('text'), text: fc.string() });
      const block = fc.oneof(
        text,
        fc.record(
          { type: fc.constantFrom('text', 'image', 'resource'), text: fc.jsonValue() },
          { requiredKeys: [] },
        ),
        fc.record(
          {
            type: fc.constant('text'),
            text: fc.string(),
            annotations: fc.jsonValue(),
            _meta: fc.jsonValue(),
          },
          { requiredKeys: ['type'] },
        ),
        fc.jsonValue(),
      );
      const resultType = fc.constantFrom('complete', 'input_required', 'task', undefined);
      // Blocks one step off a text block: another type, a text that is not a string, a key swapped.
      const nearText = fc.oneof(
        text,
        fc.record({ type: fc.constantFrom('image', 'audio', 'resource', 'Text', ''), text: fc.string() }),
        fc.record({ type: fc.constant('text'), text: fc.jsonValue() }),
        fc.record({ type: fc.constant('text'), data: fc.string() }),
      );
      // The server's name, as the v2 SDK's server stamps it under every 2026-07-28 result's `_meta`.
      const serverInfo = fc.record(
        {
          name: fc.string(),
          title: fc.string(),
          version: fc.string(),
          websiteUrl: fc.string(),
          description: fc.string(),
        },
        { requiredKeys: ['name', 'version'] },
      );
      const serverMeta = fc.record({ [SERVER_INFO_META_KEY]: serverInfo });
      // A `_meta` one step off that: a field of another type, one more field or key, or anything.
      const nearMeta = fc.oneof(
        serverMeta,
        fc.record({
          [SERVER_INFO_META_KEY]: fc.record(
            { name: fc.jsonValue(), version: fc.jsonValue(), title: fc.jsonValue(), icons: fc.jsonValue() },
            { requiredKeys: [] },
          ),
        }),
        fc.record({ [SERVER_INFO_META_KEY]: serverInfo, [TRACEPARENT_META_KEY]: fc.string() }),
        fc.jsonValue(),
      );
      // A quarter are plain text results (the check's yes side on the era's terms), a quarter are one step off
      // one (a block, `isError`, `resultType` or `_meta`), half have anything off.
      const answer = fc.oneof(
        fc.record(
          {
            content: fc.array(nearText, { maxLength: 3 }),
            isError: fc.oneof(fc.boolean(), fc.jsonValue()),
            resultType: fc.oneof(fc.constant('complete'), resultType),
            _meta: nearMeta,
          },
          { requiredKeys: ['content'] },
        ),
        fc.record(
          {
            content: fc.array(text, { maxLength: 4 }),
            isError: fc.boolean(),
            ...(era === 'modern' ? { resultType: fc.constant('complete'), _meta: serverMeta } : {}),
          },
          { requiredKeys: era === 'modern' ? ['content', 'resultType'] : ['content'] },
        ),
        fc.record(
          {
            content: fc.oneof(fc.array(block, { maxLength: 4 }), fc.jsonValue()),
            isError: fc.jsonValue(),
            resultType,
            structuredContent: fc.jsonValue(),
            _meta: fc.jsonValue(),
            task: fc.jsonValue(),
          },
          { requiredKeys: [] },
        ),
        fc.jsonValue(),
      );
      let plainSeen = 0;
      let metaSeen = 0;
      fc.assert(
        fc.property(answer, (value) => {
          const raw: unknown = JSON.parse(JSON.stringify(value) ?? 'null');
          const plain = plainTextResult(codec, raw) as { _meta?: unknown } | undefined;
          if (plain === undefined) return;
          plainSeen++;
          const decoded = codec.decodeResult('tools/call', JSON.parse(JSON.stringify(raw)));
          expect(decoded.kind).toBe('complete');
          const validated = codec.validateResult('tools/call', decoded.result);
          expect(validated.ok).toBe(true);
          expect(plain).toStrictEqual(validated.value);
          if (plain._meta === undefined) return;
          metaSeen++;
          // The server info's keys in the schema's order, too.
          expect(JSON.stringify(plain._meta)).toBe(
            JSON.stringify((validated.value as { _meta: unknown })._meta),
          );
        }),
        { numRuns: 2000 },
      );
      // About 500 expected: the property is not checked on a handful only. On 2026-07-28 about half carry `_meta`.
      expect(plainSeen).toBeGreaterThan(200);
      if (era === 'modern') expect(metaSeen).toBeGreaterThan(100);
      else expect(metaSeen).toBe(0);
    },
  );

  it('refuses what it cannot vouch for, and an unknown era', () => {
    const legacy = { era: '2025-11-25' };
    const modern = { era: '2026-07-28' };
    const plain = { content: [{ type: 'text', text: 'hi' }] };
    expect(plainTextResult(legacy, plain)).toBe(plain);
    expect(plainTextResult(modern, { ...plain, resultType: 'complete' })).toEqual(plain);
    for (const other of [
      { ...plain, resultType: 'complete' },
      { ...plain, structuredContent: {} },
      { ...plain, _meta: {} },
      { content: [{ type: 'text', text: 'hi', annotations: {} }] },
      { content: [{ type: 'image', data: 'x', mimeType: 'image/png' }] },
      { content: [{ type: 'text', text: 1 }] },
      { ...plain, isError: 'yes' },
      { task: { taskId: 't', status: 'working' } },
      [plain],
      null,
    ]) {
      expect(plainTextResult(legacy, other)).toBeUndefined();
    }
    expect(plainTextResult(modern, plain)).toBeUndefined();
    expect(plainTextResult({ era: '2099-01-01' }, plain)).toBeUndefined();
    // On 2026-07-28 a `_meta` that names the server is read; any other `_meta` takes the codec's path.
    const stamped = {
      ...plain,
      resultType: 'complete',
      _meta: { [SERVER_INFO_META_KEY]: { version: '1', name: 's' } },
    };
    expect(JSON.stringify(plainTextResult(modern, stamped))).toBe(
      JSON.stringify({ _meta: { [SERVER_INFO_META_KEY]: { name: 's', version: '1' } }, ...plain }),
    );
    for (const meta of [
      {},
      { [SERVER_INFO_META_KEY]: { name: 's' } },
      { [SERVER_INFO_META_KEY]: 's' },
      { k: 1 },
    ]) {
      expect(plainTextResult(modern, { ...plain, resultType: 'complete', _meta: meta })).toBeUndefined();
    }
  });
});

describe("the _meta of a direct call's params", () => {
  it('goes into a copy that keeps every key of the params and their _meta, an own __proto__ key too', () => {
    // JSON.parse makes own __proto__ keys; a copy by assignment would turn one into the copy's prototype.
    const params = JSON.parse(
      '{"name":"t","arguments":{"__proto__":{"x":1}},"_meta":{"__proto__":{"y":2},"k":"v"},"__proto__":{"z":3}}',
    ) as Record<string, unknown>;
    const before = JSON.stringify(params);
    for (const envelope of [undefined, Object.freeze({ 'io.example/e': 1 })]) {
      const sent = withMeta(params, envelope, 7);
      expect(JSON.parse(JSON.stringify(sent))).toEqual(
        JSON.parse(
          `{"name":"t","arguments":{"__proto__":{"x":1}},"_meta":{${envelope === undefined ? '' : '"io.example/e":1,'}"__proto__":{"y":2},"k":"v","progressToken":7},"__proto__":{"z":3}}`,
        ),
      );
      expect(Object.getPrototypeOf(sent)).toBe(Object.prototype);
      expect(Object.getPrototypeOf(sent._meta)).toBe(Object.prototype);
    }
    expect(JSON.stringify(params)).toBe(before);
    expect(withMeta({ name: 't' }, undefined, 1)).toEqual({ name: 't', _meta: { progressToken: 1 } });
  });

  it("puts the envelope's keys first and lets the caller's _meta keys win, as the SDK's envelope does", () => {
    const envelope = Object.freeze({ 'io.example/version': 'v1', 'io.example/info': { name: 'c' } });
    const params = { name: 't', _meta: { 'io.example/version': 'mine', tenant: 'a' } };
    const sent = withMeta(params, envelope, undefined);
    expect(sent).toEqual({
      name: 't',
      _meta: { 'io.example/version': 'mine', 'io.example/info': { name: 'c' }, tenant: 'a' },
    });
    expect(Object.keys(sent._meta as object)).toEqual(['io.example/version', 'io.example/info', 'tenant']);
    // Neither the envelope nor the caller's objects were written.
    expect(envelope).toEqual({ 'io.example/version': 'v1', 'io.example/info': { name: 'c' } });
    expect(params._meta).toEqual({ 'io.example/version': 'mine', tenant: 'a' });
    expect(withMeta({ name: 't' }, envelope, 3)).toEqual({
      name: 't',
      _meta: { ...envelope, progressToken: 3 },
    });
  });
});
