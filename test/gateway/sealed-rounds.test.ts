// A 2026-07-28 upstream's input round, sealed in the state the caller echoes (issue 41): the gateway holds no
// call between rounds, every continuation is decided again by the gate (audited as a continuation, so a rule
// changed in between applies), and the caller's answers reach the upstream with the upstream's own state.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Gateway } from '../../src/gateway/gateway.js';
import { ServerRequestRelay } from '../../src/gateway/relay.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { MemoryAuditSink } from '../../src/security/audit.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { nodeFixture } from '../helpers/fixtures.js';
import { recordSpans } from '../helpers/otel.js';
import { type RawAnswer, rawToolCall } from '../helpers/raw-call.js';

const ALICE = 'alice-key-0123456789abcdef';

const allow = (resource: string, actions: string[]) => ({ effect: 'allow' as const, resource, actions });
const rules = [
  allow('mcp:modern:ask_twice', ['execute']),
  allow('mcp:modern:ask_forever', ['execute']),
  allow('mcp:*:elicitation', ['request']),
];

let manager: MCPClientManager;
let capabilities: CapabilitySet;
let gateway: Gateway;
let relay: ServerRequestRelay;
let url: URL;
let audit: MemoryAuditSink;
let spans: ReturnType<typeof recordSpans>;

beforeAll(async () => {
  relay = new ServerRequestRelay({ inputTimeoutMs: 30_000 });
  capabilities = CapabilitySet.fromPolicy({ version: 1, rules });
  audit = new MemoryAuditSink();
  spans = recordSpans();
  manager = new MCPClientManager({ capabilities, audit, tracer: spans.tracer, ...relay.handlers });
  await manager.connectServer({ name: 'modern', transport: 'stdio', ...nodeFixture('modern') });
  gateway = new Gateway({
    manager,
    audit,
    relay,
    config: {
      auth: { apiKeys: [{ key: ALICE, subject: 'alice' }] },
      principals: [{ match: { subjects: ['alice'] }, rules }],
      http: { port: 0 },
    },
  });
  ({ url } = await gateway.listen());
});

afterAll(async () => {
  await gateway?.close();
  await manager?.close();
  await spans?.close();
});

/** One `tools/call` round of a tool (`ask_twice`), as a 2026-07-28 client sends it: its result, or its error. */
function send(extra: Record<string, unknown> = {}, tool = 'mcp__modern__ask_twice'): Promise<RawAnswer> {
  return rawToolCall(url, ALICE, { name: tool, arguments: {}, ...extra });
}

async function call(extra: Record<string, unknown> = {}, tool?: string): Promise<Record<string, unknown>> {
  const message = await send(extra, tool);
  expect(message.result, JSON.stringify(message)).toBeDefined();
  return message.result as Record<string, unknown>;
}

/** The answer to the one question of an `input_required` round. */
function answering(result: Record<string, unknown>, name: string) {
  expect(result.resultType, JSON.stringify(result)).toBe('input_required');
  const [key] = Object.keys(result.inputRequests as Record<string, unknown>);
  return {
    inputResponses: { [key as string]: { action: 'accept', content: { name } } },
    requestState: result.requestState,
  };
}

const textOf = (result: Record<string, unknown>) =>
  ((result.content ?? []) as { text?: string }[]).map((c) => c.text ?? '').join('\n');

/** The gate's decisions on `ask_twice` calls since `from`, with the round each continued (none: a first call). */
const decisions = (from: number) =>
  audit.records
    .slice(from)
    .filter((r) => r.resource === 'mcp:modern:ask_twice' && r.action === 'execute')
    .map((r) => ({ allowed: r.allowed, continuation: r.continuation }));

describe('a 2026-07-28 upstream that asks its caller twice, through the gateway', () => {
  it('holds nothing between rounds and decides each continuation again, audited as one', async () => {
    const from = audit.records.length;
    const first = await call();
    expect(relay.waiting).toBe(0);
    const second = await call(answering(first, 'Ada'));
    expect(relay.waiting).toBe(0);
    const done = await call(answering(second, 'Grace'));

    expect(done.isError, JSON.stringify(done)).toBeFalsy();
    expect(textOf(done)).toContain('Ada');
    expect(textOf(done)).toContain('Grace');
    // The gateway's own decision and the project policy's, for the first call and for each continuation.
    const seen = decisions(from);
    expect(seen.map((d) => d.continuation ?? 0)).toEqual(expect.arrayContaining([0, 1, 2]));
    expect(seen.every((d) => d.allowed)).toBe(true);
  });

  it('counts the call once, and reports each round it handed back as such, in events and spans', async () => {
    const before = manager.health().modern?.calls ?? 0;
    const spansBefore = spans.spans().length;
    const seen: string[] = [];
    const started = (e: { callId: number }) => seen.push(`started ${e.callId}`);
    const handed = (e: { callId: number; round: number; tool: string; durationMs: number }) => {
      expect(e.durationMs).toBeGreaterThanOrEqual(0);
      seen.push(`handed off ${e.callId}: ${e.tool} round ${e.round}`);
    };
    const completed = (e: { callId: number; resultChars: number }) =>
      seen.push(`completed ${e.callId}: ${e.resultChars > 0 ? 'text' : 'empty'}`);
    manager.on('tool_call_started', started);
    manager.on('tool_call_handed_off', handed);
    manager.on('tool_call_completed', completed);
    try {
      const first = await call();
      const second = await call(answering(first, 'Ada'));
      expect(textOf(await call(answering(second, 'Grace')))).toContain('Grace');
    } finally {
      manager.off('tool_call_started', started);
      manager.off('tool_call_handed_off', handed);
      manager.off('tool_call_completed', completed);
    }

    const ids = seen.filter((line) => line.startsWith('started')).map((line) => Number(line.split(' ')[1]));
    expect(ids).toHaveLength(3);
    const [a, b, c] = ids;
    expect(seen).toEqual([
      `started ${a}`,
      `handed off ${a}: ask_twice round 1`,
      `started ${b}`,
      `handed off ${b}: ask_twice round 2`,
      `started ${c}`,
      `completed ${c}: text`,
    ]);
    // One call in the server's figures: the round that ended it.
    expect(manager.health().modern).toMatchObject({ calls: before + 1, callsInFlight: 0 });
    const rounds = spans
      .spans()
      .slice(spansBefore)
      .filter((span) => span.name === 'tools/call ask_twice')
      .map((span) => ({
        handedOff: span.attributes['interlock.input.handed_off_round'],
        chars: span.attributes['interlock.result.chars'],
        status: span.status.code,
      }));
    expect(rounds).toEqual([
      { handedOff: 1, chars: undefined, status: 0 },
      { handedOff: 2, chars: undefined, status: 0 },
      { handedOff: undefined, chars: expect.any(Number), status: 0 },
    ]);
  });

  it('applies a rule changed between two rounds to the continuation', async () => {
    const first = await call();
    const id = capabilities.deny('mcp:modern:ask_twice', 'execute');
    try {
      // The denied tool is no longer the caller's: its continuation is refused before it reaches the upstream.
      const refused = await send(answering(first, 'Ada'));
      expect(refused.result, JSON.stringify(refused)).toBeUndefined();
      expect(refused.error?.message).toMatch(/Unknown tool/);
    } finally {
      capabilities.revoke(id);
    }
  });

  it('stops a call whose upstream still asks after 10 rounds', async () => {
    const forever = 'mcp__modern__ask_forever';
    let result = await call({}, forever);
    let rounds = 0;
    while (result.resultType === 'input_required' && rounds <= 10) {
      rounds++;
      const [key] = Object.keys(result.inputRequests as Record<string, unknown>);
      result = await call(
        {
          inputResponses: { [key as string]: { action: 'accept', content: { ok: true } } },
          requestState: result.requestState,
        },
        forever,
      );
    }
    expect(rounds).toBe(10);
    expect(result.isError, JSON.stringify(result)).toBe(true);
    expect(textOf(result)).toMatch(/after 10 rounds/);
    expect(relay.waiting).toBe(0);
  });
});
