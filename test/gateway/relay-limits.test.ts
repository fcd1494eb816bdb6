// What the gateway's relay refuses (issue 38): a 2025-era server's question that names no call (here one owed by
// a call that already ended) is declined rather than put to another caller whose call is in flight, unless the
// server is opted in; and first rounds that stop for input and are never answered cannot pile up upstream calls
// without bound. Real stdio servers (routing.mjs on the 2025 protocol, modern.mjs on 2026-07-28) whose own logs
// show what reached them, real HTTP listener and clients.
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttp,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Gateway } from '../../src/gateway/gateway.js';
import { ServerRequestRelay } from '../../src/gateway/relay.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { createFixtureLog, type FixtureLog, nodeFixture } from '../helpers/index.js';
import { rawToolCall } from '../helpers/raw-call.js';

const ALICE = 'alice-key-0123456789abcdef';
const BOB = 'bob-key-0123456789abcdef01';

const allow = (resource: string, actions: string[]) => ({ effect: 'allow' as const, resource, actions });

let modernLog: FixtureLog;
let manager: MCPClientManager;
let relay: ServerRequestRelay;
let gateway: Gateway;
let url: URL;

beforeAll(async () => {
  modernLog = createFixtureLog();
  relay = new ServerRequestRelay();
  manager = new MCPClientManager({
    capabilities: CapabilitySet.fromPolicy({
      version: 1,
      rules: [allow('mcp:*:*', ['execute']), allow('mcp:*:elicitation', ['request'])],
    }),
    ...relay.handlers,
  });
  await Promise.all([
    manager.connectServer({
      name: 'late',
      transport: 'stdio',
      ...nodeFixture('routing', ['--label', 'late']),
    }),
    // The same server, opted in to routing requests that name no call to the one caller in flight.
    manager.connectServer({
      name: 'sole',
      transport: 'stdio',
      ...nodeFixture('routing', ['--label', 'sole']),
    }),
    manager.connectServer({
      name: 'modern',
      transport: 'stdio',
      ...nodeFixture('modern'),
      env: modernLog.env,
    }),
  ]);
  gateway = new Gateway({
    manager,
    relay,
    config: {
      auth: {
        apiKeys: [
          { key: ALICE, subject: 'alice' },
          { key: BOB, subject: 'bob' },
        ],
      },
      // Each echo waits for its caller's approval, held in this process (a 2026-07-28 upstream's own questions
      // are handed to the caller and hold nothing here: issue 41).
      principals: [
        {
          match: { subjects: ['alice', 'bob'] },
          rules: [
            allow('mcp:late:*', ['execute']),
            allow('mcp:sole:*', ['execute']),
            allow('mcp:*:elicitation', ['request']),
            { effect: 'ask' as const, resource: 'mcp:modern:echo', actions: ['execute'], id: 'confirm-echo' },
          ],
        },
      ],
      serverRequests: { routeUnattributed: ['sole'], maxParkedCallsPerPrincipal: 2, maxParkedCalls: 3 },
      http: { port: 0 },
    },
  });
  ({ url } = await gateway.listen());
});

afterAll(async () => {
  await gateway?.close();
  await manager?.close();
  await modernLog?.close();
});

/** A 2026-07-28 client that answers every elicitation with its own name, and records that it was asked. */
async function answering(key: string, name: string, asked: string[]) {
  const client = new ModernClient(
    { name: 'limits-test', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } },
  );
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params.message);
    return { action: 'accept', content: { name } };
  });
  await client.connect(new ModernHttp(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

function textOf(result: unknown): string {
  const content = (result as { content?: { text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? '').join('\n');
}

describe("a 2025-era server's question that names no call", () => {
  it('is declined when its call has ended, never put to another caller in flight', async () => {
    const aliceAsked: string[] = [];
    const bobAsked: string[] = [];
    const alice = await answering(ALICE, 'Alice', aliceAsked);
    const bob = await answering(BOB, 'Bob', bobAsked);
    try {
      // Alice's call ends at once; the question it owes comes while Bob's call runs.
      expect(textOf(await alice.callTool({ name: 'mcp__late__ask_later', arguments: {} }))).toContain(
        'will ask later',
      );
      const held = textOf(await bob.callTool({ name: 'mcp__late__hold', arguments: {} }));
      expect(held).toContain('"action":"decline"');
      expect(held).not.toContain('Bob');
      expect([...aliceAsked, ...bobAsked]).toEqual([]);
    } finally {
      await alice.close();
      await bob.close();
    }
  });

  it('goes to the one caller in flight for a server opted in to routeUnattributed', async () => {
    const asked: string[] = [];
    const bob = await answering(BOB, 'Bob', asked);
    try {
      await bob.callTool({ name: 'mcp__sole__ask_later', arguments: {} });
      const held = textOf(await bob.callTool({ name: 'mcp__sole__hold', arguments: {} }));
      expect(held).toContain('"action":"accept"');
      expect(held).toContain('Bob');
      expect(asked).toEqual(['A question owed by an earlier call']);
    } finally {
      await bob.close();
    }
  });
});

describe('calls waiting for their caller’s answer', () => {
  /** One `tools/call` round of `mcp__modern__echo` (approved by its caller first), as a 2026-07-28 client sends it. */
  async function ask(key: string, extra: Record<string, unknown> = {}) {
    const params = { name: 'mcp__modern__echo', arguments: { text: 'approved' }, ...extra };
    return (await rawToolCall(url, key, params)).result as Record<string, unknown>;
  }
  const asks = () => modernLog.toolCalls('echo').length;

  it('are bounded per caller and in all, with OVERLOADED, and a refused call never reaches the server', async () => {
    const first = await ask(ALICE);
    const second = await ask(ALICE);
    expect([first.resultType, second.resultType]).toEqual(['input_required', 'input_required']);
    expect(relay.waiting).toBe(2);
    const before = asks();

    // Alice's third unanswered first round is over her bound of 2.
    const third = await ask(ALICE);
    expect(third.isError).toBe(true);
    expect(textOf(third)).toMatch(/^OVERLOADED: You already have 2 calls waiting for your answers/);
    expect(asks()).toBe(before);

    // Bob has his own bound, but the gateway's bound of 3 in all is reached after his first.
    expect((await ask(BOB)).resultType).toBe('input_required');
    const over = await ask(BOB);
    expect(over.isError).toBe(true);
    expect(textOf(over)).toMatch(/^OVERLOADED: The gateway already holds 3 calls waiting/);
    expect(asks()).toBe(before);

    // Answering one of Alice's calls frees its place: her next call may wait again.
    const [key] = Object.keys(first.inputRequests as object);
    const done = await ask(ALICE, {
      inputResponses: { [key as string]: { action: 'accept', content: { approve: true } } },
      requestState: first.requestState,
    });
    expect(textOf(done)).toBe('approved');
    expect(asks()).toBe(before + 1);
    expect(relay.waiting).toBe(2);
    expect((await ask(ALICE)).resultType).toBe('input_required');
  });

  it('refuses bounds that are not positive integers when the gateway starts', () => {
    expect(
      () => new Gateway({ manager, relay, config: { serverRequests: { maxParkedCallsPerPrincipal: 0 } } }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));
    expect(() => new ServerRequestRelay({ maxParkedCalls: 1.5 })).toThrow(
      expect.objectContaining({
        code: 'INVALID_CONFIG',
        issues: [expect.objectContaining({ path: 'serverRequests.maxParkedCalls' })],
      }),
    );
  });
});
