/**
 * What each MCP client class costs per `tools/call`, with the transport and the server taken out (issue 15): the
 * raw 1.x `Client`, the v2 `Client`, Interlock's `InterlockClient` (called as Interlock's call path calls it: a
 * tool definition, a progress handler, the timeout reset on progress) and the AI SDK's client (through the tool it
 * hands out) each talk to the same in-process echo server through the same transport, which serializes every
 * message to JSON and parses every answer as a pipe would, and answers on the next turn. No process, no pipe and no
 * system call: what is left is the client's own request, response and result work, steady enough to show a
 * fraction of a µs. Interlock's pipeline around the client is measured apart by bench/pipeline-cost.ts. One table
 * per protocol era: a 2025-11-25 echo, then a 2026-07-28 one for the clients that speak it (the v2 client and
 * Interlock's).
 *
 *   node --import tsx bench/client-cost.ts [--calls 100000] [--rounds 5]
 *
 * Prints CPU µs per call (the median over rounds) sequentially and with 16 calls in flight, and the bytes a call
 * allocates (V8's sampling heap profiler, counting what the GC has already collected, over one more run at 16).
 */
import { parseArgs } from 'node:util';
import { Client as ClientV2, SERVER_INFO_META_KEY } from '@modelcontextprotocol/client';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import type * as InterlockClientModule from '../src/protocol/client.js';
import { importPeer } from './lib/peers.js';
import { measurePerCall, perCallRow } from './lib/per-call.js';
import { ensureInterlockBuild, importBuild } from './lib/processes.js';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '5' } },
});
const calls = Number(values.calls);
const rounds = Number(values.rounds);
if (!Number.isInteger(calls) || calls < 1) throw new Error('--calls must be a positive integer');
if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds must be a positive integer');

// The modules build: InterlockClient is internal, and only there a file of its own.
const entry = ensureInterlockBuild({ modules: true });
const { InterlockClient } = await importBuild<typeof InterlockClientModule>(entry, 'protocol/client.js');

type Message = { jsonrpc: '2.0'; id?: string | number; method?: string; params?: Record<string, unknown> };

const ECHO_TOOL = {
  name: 'echo',
  description: 'Returns its text argument.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
};

type Era = 'legacy' | 'modern';

/** What a 2026-07-28 server built with the v2 SDK adds to every result: its kind, and its name under `_meta`. */
const MODERN_RESULT = {
  resultType: 'complete',
  _meta: { [SERVER_INFO_META_KEY]: { name: 'client-cost-echo', version: '1.0.0' } },
};

/**
 * The echo server's answer to one request, as the line it would write. A 2025-era echo refuses `server/discover`;
 * a 2026-07-28 one answers it and refuses `initialize`, and stamps every result as the v2 SDK's server does.
 */
function answer(era: Era, message: Message): string | undefined {
  if (message.id === undefined) return undefined;
  const reply = (result: object) =>
    JSON.stringify({
      jsonrpc: '2.0',
      id: message.id,
      result: era === 'modern' ? { ...result, ...MODERN_RESULT } : result,
    });
  switch (era === 'modern' && message.method === 'initialize' ? 'refused' : message.method) {
    case 'server/discover':
      if (era === 'legacy') break;
      return reply({ supportedVersions: ['2026-07-28'], capabilities: { tools: { listChanged: false } } });
    case 'initialize':
      return reply({
        protocolVersion: message.params?.protocolVersion,
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: 'client-cost-echo', version: '1.0.0' },
      });
    case 'tools/list':
      // On 2026-07-28 a list says how long it may be cached.
      return reply(
        era === 'modern' ? { tools: [ECHO_TOOL], ttlMs: 0, cacheScope: 'private' } : { tools: [ECHO_TOOL] },
      );
    case 'tools/call': {
      const text = (message.params?.arguments as { text?: string } | undefined)?.text ?? '';
      return reply({ content: [{ type: 'text', text }] });
    }
  }
  return JSON.stringify({
    jsonrpc: '2.0',
    id: message.id,
    error: { code: -32601, message: `Method not found: ${message.method}` },
  });
}

/**
 * An in-process transport to the echo server: each message sent is serialized and handed over, and each answer is
 * parsed and delivered on a later turn (`setImmediate`, as a pipe's data would arrive), several per turn when many
 * are in flight. Looks like a stdio transport to the v2 client's era probe (it has `stderr`).
 */
class EchoTransport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: unknown, extra?: unknown) => void;
  #pending: string[] = [];
  #scheduled = false;
  readonly stderr = null;
  readonly #era: Era;

  constructor(era: Era) {
    this.#era = era;
  }

  async start(): Promise<void> {}

  send(message: unknown): Promise<void> {
    const line = answer(this.#era, JSON.parse(JSON.stringify(message)) as Message);
    if (line !== undefined) {
      this.#pending.push(line);
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#deliver());
      }
    }
    return Promise.resolve();
  }

  #deliver(): void {
    this.#scheduled = false;
    const lines = this.#pending;
    this.#pending = [];
    for (const line of lines) this.onmessage?.(JSON.parse(line));
  }

  async close(): Promise<void> {
    this.onclose?.();
  }
}

interface Contender {
  name: string;
  /** The eras it speaks: the raw 1.x client and the AI SDK's client speak 2025 only. */
  eras: readonly Era[];
  open(era: Era): Promise<{ call(): Promise<unknown>; close(): Promise<void> }>;
}

const ARGS = { text: 'The quick brown fox jumps over the lazy dog' };

/** What the harness needs of either SDK's `Client`. */
interface SdkClient {
  connect(transport: never): Promise<void>;
  listTools(): Promise<unknown>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

/** A raw SDK client, called as its documentation shows. */
function sdkContender(name: string, eras: readonly Era[], create: () => SdkClient): Contender {
  return {
    name,
    eras,
    async open(era) {
      const client = create();
      await client.connect(new EchoTransport(era) as never);
      await client.listTools();
      return { call: () => client.callTool({ name: 'echo', arguments: ARGS }), close: () => client.close() };
    },
  };
}

/** The AI SDK's client (`@ai-sdk/mcp`), called through the tool it hands out, as the `ai-sdk` contender calls it. */
interface AiTool {
  execute(
    input: Record<string, unknown>,
    options: { toolCallId: string; messages: unknown[] },
  ): Promise<unknown>;
}
const aiSdk = await importPeer<{
  createMCPClient(config: { transport: unknown }): Promise<{
    tools(): Promise<Record<string, AiTool>>;
    close(): Promise<void>;
  }>;
}>('@ai-sdk/mcp').catch((error: unknown) => {
  // The peers are the bench's own dependencies (bench/package.json); without them the row is left out, said so.
  process.stderr.write(`no AI SDK row: @ai-sdk/mcp did not load (${String(error)})\n`);
  return undefined;
});
let toolCallIds = 0;

const contenders: Contender[] = [
  sdkContender(
    'raw SDK Client (1.x)',
    ['legacy'],
    () => new Client1({ name: 'client-cost', version: '1.0.0' }) as never,
  ),
  sdkContender(
    'raw SDK v2 Client',
    ['legacy', 'modern'],
    () =>
      new ClientV2(
        { name: 'client-cost', version: '1.0.0' },
        { versionNegotiation: { mode: 'auto' } },
      ) as never,
  ),
  {
    name: 'InterlockClient, as the call path calls it',
    eras: ['legacy', 'modern'],
    async open(era) {
      const client = new InterlockClient(
        { name: 'client-cost', version: '1.0.0' },
        { capabilities: {}, versionNegotiation: { mode: 'auto' } },
      );
      await client.connect(new EchoTransport(era) as never);
      if (client.getProtocolEra() !== era)
        throw new Error(`InterlockClient negotiated the ${client.getProtocolEra()} era`);
      await client.listTools();
      const options = {
        timeout: 60_000,
        toolDefinition: { name: 'echo', inputSchema: ECHO_TOOL.inputSchema },
        onprogress: () => {},
        resetTimeoutOnProgress: true,
        maxTotalTimeout: undefined,
        signal: undefined,
      };
      // The call path's options take the direct tools/call path: checked, or the figure would be the SDK's path.
      await client.callTool({ name: 'echo', arguments: ARGS }, options);
      if (client.directCalls !== 1)
        throw new Error('InterlockClient did not take its direct tools/call path');
      return {
        call: () => client.callTool({ name: 'echo', arguments: ARGS }, options),
        close: () => client.close(),
      };
    },
  },
];
if (aiSdk !== undefined) {
  contenders.push({
    name: "AI SDK's client, through its tool",
    eras: ['legacy'],
    async open(era) {
      const client = await aiSdk.createMCPClient({ transport: new EchoTransport(era) });
      const echo = (await client.tools()).echo;
      if (echo === undefined) throw new Error("the AI SDK's client found no echo tool");
      return {
        call: () => echo.execute(ARGS, { toolCallId: `call-${++toolCallIds}`, messages: [] }),
        close: () => client.close(),
      };
    },
  });
}

const ERA_TITLES: Record<Era, string> = {
  legacy: 'a 2025-11-25 echo server',
  modern:
    'a 2026-07-28 echo server (results stamped with `resultType` and `_meta` serverInfo, as the v2 server does)',
};

const tables: string[] = [];
for (const era of ['legacy', 'modern'] as const) {
  const rows: string[] = [];
  for (const contender of contenders) {
    if (!contender.eras.includes(era)) continue;
    const client = await contender.open(era);
    const answered = (await client.call()) as { content?: { text?: string }[] };
    if (answered.content?.[0]?.text !== ARGS.text) {
      throw new Error(`${contender.name}: the echo answered ${JSON.stringify(answered)}`);
    }
    const cost = await measurePerCall(client.call, { calls, rounds });
    await client.close();
    rows.push(perCallRow(contender.name, cost));
  }
  tables.push(
    `Each client's own work per tools/call, in-process, ${ERA_TITLES[era]} (CPU: median of ${rounds} rounds of ${calls} calls; Node ${process.version})`,
    '',
    '| Client | CPU µs, sequential | CPU µs, 16 in flight | bytes allocated per call |',
    '| --- | ---: | ---: | ---: |',
    ...rows,
    '',
  );
}
process.stdout.write(tables.join('\n'));
