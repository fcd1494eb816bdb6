// Replicas without stickiness (issue 41): two `interlock serve --http` processes, one real redis-server, and a
// round-robin balancer in front. A tool that asks its caller twice completes wherever each answer lands, on a
// 2026-07-28 upstream (its round sealed in the caller's state: nothing routed, nothing parked, so the process
// that asked may die meanwhile) and on a 2025-era one (routed to the process that holds the call); an `ask`
// approval answered on the other process lets the call go on; a state replayed by another caller, for another tool or other arguments is refused; and an answer for a
// call whose process was killed gets REPLICA_UNAVAILABLE at once instead of hanging.
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttp,
} from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningCli, startCli, type TempProject, tempProject } from '../cli/helpers.js';
import { fixture } from '../helpers/fixtures.js';
import { rawToolCall } from '../helpers/raw-call.js';
import { redisForFile } from '../helpers/redis.js';
import { roundRobin } from '../helpers/round-robin.js';

const ALICE = 'alice-key-0123456789abcdef';
const BOB = 'bob-key-0123456789abcdef01';
const OPS = 'ops-key-0123456789abcdef012';

// Each test starts two gateway processes (and their upstream servers): on a loaded machine that takes a while.
const SLOW = 180_000;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const redis = redisForFile();

const allow = (resource: string, actions = ['execute']) => ({ effect: 'allow' as const, resource, actions });

function project(): { dir: TempProject; file: string } {
  const dir = tempProject();
  cleanups.push(() => dir.close());
  const tools = [
    allow('mcp:modern:ask_twice'),
    allow('mcp:legacy:ask_twice'),
    allow('mcp:modern:echo'),
    allow('mcp:*:elicitation', ['request']),
  ];
  const file = dir.write('interlock.config.yaml', {
    mcpServers: {
      modern: { command: process.execPath, args: [fixture('modern')] },
      legacy: { command: process.execPath, args: [fixture('routing'), '--label', 'legacy'] },
    },
    policy: { version: 1, rules: tools },
    state: { redis: { url: redis.current.url, keyPrefix: `replicas-${Date.now()}:` } },
    gateway: {
      auth: {
        apiKeys: [
          { key: ALICE, subject: 'alice' },
          { key: BOB, subject: 'bob' },
          { key: OPS, subject: 'ops' },
        ],
      },
      operators: { subjects: ['ops'] },
      principals: [
        {
          match: { subjects: ['alice'] },
          rules: [
            ...tools.filter((r) => r.resource !== 'mcp:modern:echo'),
            // Alice is asked before each echo.
            { effect: 'ask', resource: 'mcp:modern:echo', actions: ['execute'], id: 'confirm-echo' },
          ],
        },
        { match: { subjects: ['bob'] }, rules: tools },
      ],
      // The 2025-era server asks on its stdio session, naming no call: it goes to the one caller in flight.
      serverRequests: { routeUnattributed: ['legacy'], inputTimeoutMs: 60_000 },
      replicas: { ackTimeoutMs: 1_000 },
    },
  });
  return { dir, file };
}

async function serveHttp(file: string, cwd: string): Promise<{ cli: RunningCli; url: URL }> {
  const cli = startCli(['--config', file, 'serve', '--http', '--port', '0'], { cwd, timeoutMs: 300_000 });
  cleanups.push(async () => {
    if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    await cli.done;
  });
  await cli.waitFor(/listening on (\S+)/);
  return { cli, url: new URL(/listening on (\S+)/.exec(cli.stdout())?.[1] ?? '') };
}

/** Two gateway processes of one project, and a round-robin balancer in front of them. */
async function fleet() {
  const { dir, file } = project();
  const [a, b] = await Promise.all([serveHttp(file, dir.dir), serveHttp(file, dir.dir)]);
  const proxy = await roundRobin([a.url, b.url]);
  cleanups.push(() => proxy.close());
  return { a, b, proxy, endpoint: new URL(a.url.pathname, proxy.url) };
}

/** Rounds one process forwarded to the holder of their call, and rounds it served for another process. */
async function routed(url: URL): Promise<{ forwarded: number; served: number }> {
  const response = await fetch(new URL('/metrics', url), { headers: { authorization: `Bearer ${OPS}` } });
  const text = await response.text();
  const read = (direction: string) =>
    Number(
      new RegExp(`interlock_gateway_routed_rounds\\{direction="${direction}"\\} (\\d+)`).exec(text)?.[1],
    );
  return { forwarded: read('forwarded'), served: read('served') };
}

function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? '').join('\n');
}

describe.each([
  { era: '2026-07-28', tool: 'mcp__modern__ask_twice', sealed: true },
  { era: '2025-11-25', tool: 'mcp__legacy__ask_twice', sealed: false },
])(
  'a tool of a $era upstream that asks its caller twice, behind a round-robin balancer',
  ({ tool, sealed }) => {
    it(
      'completes with both answers, each landing on another process than the one before',
      async () => {
        const { a, b, proxy, endpoint } = await fleet();
        const client = new ModernClient(
          { name: 'replicas-test', version: '1.0.0' },
          { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } },
        );
        const asked: string[] = [];
        client.setRequestHandler('elicitation/create', async (request) => {
          asked.push(request.params.message);
          const name = asked.length === 1 ? 'Ada' : 'Grace';
          return { action: 'accept', content: { name } };
        });
        await client.connect(
          new ModernHttp(endpoint, { requestInit: { headers: { authorization: `Bearer ${ALICE}` } } }),
        );
        cleanups.push(() => client.close());
        expect(client.getProtocolEra()).toBe('modern');

        const result = await client.callTool({ name: tool, arguments: {} });

        expect(result.isError, textOf(result)).toBeFalsy();
        expect(asked).toEqual(['First question?', 'Second question?']);
        expect(textOf(result)).toContain('Ada');
        expect(textOf(result)).toContain('Grace');
        // Three rounds of one call (ask, answer and ask again, answer): consecutive rounds on different processes.
        const rounds = proxy.log().filter((r) => r.method === 'tools/call');
        expect(rounds).toHaveLength(3);
        expect(rounds[1]?.backend).not.toBe(rounds[0]?.backend);
        expect(rounds[2]?.backend).not.toBe(rounds[1]?.backend);
        const [first, second] = [await routed(a.url), await routed(b.url)];
        if (sealed) {
          // The upstream's own state rode sealed in the caller's: each process continued the call by itself.
          expect([first, second]).toEqual([
            { forwarded: 0, served: 0 },
            { forwarded: 0, served: 0 },
          ]);
          return;
        }
        // The middle round landed on the process that does not hold the call: it was forwarded to the holder.
        const [holder, other] = rounds[0]?.backend === 0 ? [first, second] : [second, first];
        expect(other.forwarded).toBe(1);
        expect(holder.served).toBe(1);
        expect(holder.forwarded + other.served).toBe(0);
      },
      SLOW,
    );
  },
);

/** A 2026-07-28 `tools/call` round sent straight to one process, as a client would after a balancer. */
async function raw(url: URL, key: string, params: Record<string, unknown>) {
  return (await rawToolCall(url, key, params)).result as Record<string, unknown>;
}

/** The one question of an `input_required` round: its key, and the state to echo. */
function question(result: Record<string, unknown>): { key: string; message: string; state: unknown } {
  expect(result.resultType, JSON.stringify(result)).toBe('input_required');
  const requests = result.inputRequests as Record<string, { params: { message: string } }>;
  const [key] = Object.keys(requests);
  return {
    key: key as string,
    message: requests[key as string]?.params.message ?? '',
    state: result.requestState,
  };
}

describe('answers sent to the process that does not hold the call', () => {
  it(
    "approves an `ask` rule's question there, and refuses the state from another caller, tool or arguments",
    async () => {
      const { a, b } = await fleet();
      const asked = question(
        await raw(a.url, ALICE, { name: 'mcp__modern__echo', arguments: { text: 'hello' } }),
      );
      expect(asked.message).toMatch(/^Allow execute of modern\/echo\?/);
      const approve = { [asked.key]: { action: 'accept', content: { approve: true } } };
      const answer = (key: string, name: string, args: Record<string, unknown>) =>
        raw(b.url, key, { name, arguments: args, inputResponses: approve, requestState: asked.state });

      const refusals = [
        await answer(BOB, 'mcp__modern__echo', { text: 'hello' }),
        await answer(ALICE, 'mcp__modern__ask_twice', {}),
        await answer(ALICE, 'mcp__modern__echo', { text: 'something else' }),
      ];
      for (const refused of refusals) {
        expect(refused.isError, JSON.stringify(refused)).toBe(true);
        expect(textOf(refused)).toMatch(/^CAPABILITY_DENIED: .*does not hold/);
      }
      expect((await routed(b.url)).forwarded).toBe(0);

      const done = await answer(ALICE, 'mcp__modern__echo', { text: 'hello' });
      expect(done.isError, JSON.stringify(done)).toBeFalsy();
      expect(textOf(done)).toBe('hello');
      expect(await routed(b.url)).toEqual({ forwarded: 1, served: 0 });
      expect(await routed(a.url)).toEqual({ forwarded: 0, served: 1 });
      // The holder answered the call once: the same answer again finds nothing to resume.
      const again = await answer(ALICE, 'mcp__modern__echo', { text: 'hello' });
      expect(textOf(again)).toMatch(/does not hold/);
    },
    SLOW,
  );

  it(
    'takes one answer per round when it lands on both processes at once, and fails with REPLICA_UNAVAILABLE, without hanging, once the holder of the 2025-era call is killed',
    async () => {
      const { a, b } = await fleet();
      const first = question(await raw(a.url, ALICE, { name: 'mcp__legacy__ask_twice', arguments: {} }));
      expect(first.message).toBe('First question?');
      const answer = (url: URL, asked: typeof first, name: string) =>
        raw(url, ALICE, {
          name: 'mcp__legacy__ask_twice',
          arguments: {},
          inputResponses: { [asked.key]: { action: 'accept', content: { name } } },
          requestState: asked.state,
        });

      // The same round answered on the holder and, through the other process, at the same time: one is taken.
      const both = await Promise.all([answer(a.url, first, 'Ada'), answer(b.url, first, 'Ada')]);
      const taken = both.filter((r) => r.resultType === 'input_required');
      const refused = both.filter((r) => r.isError === true);
      expect(taken, JSON.stringify(both)).toHaveLength(1);
      expect(textOf(refused[0])).toMatch(/^CAPABILITY_DENIED: .*does not hold/);
      const second = question(taken[0] as Record<string, unknown>);
      expect(second.message).toBe('Second question?');

      a.cli.child.kill('SIGKILL');
      await a.cli.done;
      const result = await answer(b.url, second, 'Grace');

      expect(result.isError, JSON.stringify(result)).toBe(true);
      expect(textOf(result)).toMatch(/^REPLICA_UNAVAILABLE: .*call the tool again/);
      expect(await routed(b.url)).toEqual({ forwarded: 2, served: 0 });
    },
    SLOW,
  );
});

describe('a 2026-07-28 upstream whose round is sealed in the state the caller echoes', () => {
  const answer = (url: URL, key: string, asked: { key: string; state: unknown }, name: string, args = {}) =>
    raw(url, key, {
      name: 'mcp__modern__ask_twice',
      arguments: args,
      inputResponses: { [asked.key]: { action: 'accept', content: { name } } },
      requestState: asked.state,
    });

  it(
    'completes on the other process after the process that asked was killed, with nothing routed',
    async () => {
      const { a, b } = await fleet();
      const first = question(await raw(a.url, ALICE, { name: 'mcp__modern__ask_twice', arguments: {} }));
      expect(first.message).toBe('First question?');
      a.cli.child.kill('SIGKILL');
      await a.cli.done;

      const second = question(await answer(b.url, ALICE, first, 'Ada'));
      expect(second.message).toBe('Second question?');
      const done = await answer(b.url, ALICE, second, 'Grace');

      expect(done.isError, JSON.stringify(done)).toBeFalsy();
      expect(textOf(done)).toContain('Ada');
      expect(textOf(done)).toContain('Grace');
      expect(await routed(b.url)).toEqual({ forwarded: 0, served: 0 });
    },
    SLOW,
  );

  it(
    'refuses a tampered state, and one sent by another caller or for other arguments',
    async () => {
      const { a, b } = await fleet();
      const first = question(await raw(a.url, ALICE, { name: 'mcp__modern__ask_twice', arguments: {} }));
      const state = String(first.state);
      // One character of the sealed state changed, in its middle.
      const at = Math.floor(state.length / 2);
      const tampered = `${state.slice(0, at)}${state[at] === 'A' ? 'B' : 'A'}${state.slice(at + 1)}`;
      const refusals = [
        await answer(b.url, ALICE, { ...first, state: tampered }, 'Ada'),
        await answer(b.url, BOB, first, 'Ada'),
        await answer(b.url, ALICE, first, 'Ada', { extra: true }),
      ];
      for (const refused of refusals) {
        expect(refused.isError, JSON.stringify(refused)).toBe(true);
        expect(textOf(refused)).toMatch(/^CAPABILITY_DENIED: .*does not hold/);
      }
      // The state itself still continues the call, on either process.
      expect(question(await answer(a.url, ALICE, first, 'Ada')).message).toBe('Second question?');
    },
    SLOW,
  );
});
