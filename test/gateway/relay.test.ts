// The gateway relays the requests upstream servers make during a call (issue 17): elicitation and sampling from
// a 2026-07-28 upstream (multi-round-trip) and a 2025-11-25 upstream (server-everything, push requests over
// stdio) reach real downstream clients of both eras over HTTP, decided by the project policy and then by the
// caller's own rules. A caller whose rules do not allow it, or whose client did not declare the capability,
// never sees the request; the upstream server gets a decline or a refusal.
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttp,
} from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttp } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Gateway } from '../../src/gateway/gateway.js';
import { ServerRequestRelay } from '../../src/gateway/relay.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { MemoryAuditSink } from '../../src/security/audit.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { nodeFixture } from '../helpers/fixtures.js';
import { EVERYTHING_BIN } from '../helpers/http-fixtures.js';
import { rawToolCall } from '../helpers/raw-call.js';

const ALICE = 'alice-key-0123456789abcdef';
const BOB = 'bob-key-0123456789abcdef01';

const allow = (resource: string, actions: string[]) => ({ effect: 'allow' as const, resource, actions });

let manager: MCPClientManager;
let gateway: Gateway;
let relay: ServerRequestRelay;
let url: URL;
let audit: MemoryAuditSink;

beforeAll(async () => {
  const everything = [
    allow('mcp:legacy:trigger-elicitation-request', ['execute']),
    allow('mcp:legacy:trigger-sampling-request', ['execute']),
  ];
  const modern = [
    allow('mcp:modern:ask', ['execute']),
    allow('mcp:modern:sample', ['execute']),
    allow('mcp:modern:echo', ['execute']),
  ];
  const requests = [allow('mcp:*:elicitation', ['request']), allow('mcp:*:sampling', ['request'])];
  // server-everything (2025-era, stdio) names no call in its requests: it is opted in to sole-caller routing.
  relay = new ServerRequestRelay({ inputTimeoutMs: 30_000, routeUnattributed: ['legacy'] });
  manager = new MCPClientManager({
    capabilities: CapabilitySet.fromPolicy({ version: 1, rules: [...everything, ...modern, ...requests] }),
    ...relay.handlers,
  });
  await Promise.all([
    manager.connectServer({ name: 'modern', transport: 'stdio', ...nodeFixture('modern') }),
    manager.connectServer({
      name: 'legacy',
      transport: 'stdio',
      command: process.execPath,
      args: [EVERYTHING_BIN, 'stdio'],
    }),
  ]);
  audit = new MemoryAuditSink();
  gateway = new Gateway({
    manager,
    audit,
    relay,
    config: {
      auth: {
        apiKeys: [
          { key: ALICE, subject: 'alice' },
          { key: BOB, subject: 'bob' },
        ],
      },
      principals: [
        {
          match: { subjects: ['alice'] },
          rules: [
            ...everything,
            ...modern.filter((r) => r.resource !== 'mcp:modern:echo'),
            ...requests,
            // Alice is asked before each echo.
            { effect: 'ask' as const, resource: 'mcp:modern:echo', actions: ['execute'], id: 'confirm-echo' },
          ],
        },
        // Bob may call the tools, but no server may ask him anything.
        { match: { subjects: ['bob'] }, rules: [...everything, ...modern] },
      ],
      http: { port: 0 },
    },
  });
  ({ url } = await gateway.listen());
});

afterAll(async () => {
  await gateway?.close();
  await manager?.close();
});

/** What a downstream client received, and how it answered. */
interface Answers {
  asked: string[];
}

const ELICIT_ANSWER = { action: 'accept' as const, content: { name: 'Ada', color: 'green', integer: 7 } };
const SAMPLE_ANSWER = {
  role: 'assistant' as const,
  content: { type: 'text' as const, text: 'Autumn moonlight' },
  model: 'downstream-model',
  stopReason: 'endTurn',
};

async function modernClient(
  key: string,
  capabilities: Record<string, unknown>,
  answers: Answers,
  name = 'Ada',
) {
  const client = new ModernClient(
    { name: 'relay-test', version: '1.0.0' },
    { capabilities, versionNegotiation: { mode: 'auto' } },
  );
  if ('elicitation' in capabilities) {
    client.setRequestHandler('elicitation/create', async (request) => {
      answers.asked.push(`elicit: ${request.params.message}`);
      return { action: 'accept', content: { ...ELICIT_ANSWER.content, name } };
    });
  }
  if ('sampling' in capabilities) {
    client.setRequestHandler('sampling/createMessage', async (request) => {
      answers.asked.push(`sample: ${JSON.stringify(request.params.messages[0]?.content)}`);
      return SAMPLE_ANSWER;
    });
  }
  await client.connect(new ModernHttp(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  expect(client.getProtocolEra()).toBe('modern');
  return client;
}

async function legacyClient(key: string, capabilities: Record<string, unknown>, answers: Answers) {
  const client = new LegacyClient({ name: 'relay-test-2025', version: '1.0.0' }, { capabilities });
  if ('elicitation' in capabilities) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      answers.asked.push(`elicit: ${request.params.message}`);
      return ELICIT_ANSWER;
    });
  }
  if ('sampling' in capabilities) {
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      answers.asked.push(`sample: ${JSON.stringify(request.params.messages[0]?.content)}`);
      return SAMPLE_ANSWER;
    });
  }
  await client.connect(new LegacyHttp(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

type Downstream = {
  era: string;
  connect: (
    key: string,
    capabilities: Record<string, unknown>,
    answers: Answers,
  ) => Promise<{
    callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
    close(): Promise<void>;
  }>;
};
const downstreams: Downstream[] = [{ era: '2026-07-28', connect: modernClient }];

const upstreams = [
  {
    era: '2026-07-28',
    elicit: { tool: 'mcp__modern__ask', args: {} },
    sample: { tool: 'mcp__modern__sample', args: {} },
  },
  {
    era: '2025-11-25',
    elicit: { tool: 'mcp__legacy__trigger-elicitation-request', args: {} },
    sample: {
      tool: 'mcp__legacy__trigger-sampling-request',
      args: { prompt: 'A haiku, please.', maxTokens: 50 },
    },
  },
];

const BOTH = { elicitation: { form: {} }, sampling: {} };

function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? '').join('\n');
}

describe.each(downstreams)('a $era downstream client', (down) => {
  describe.each(upstreams)('of a $era upstream server', (up) => {
    it('answers the upstream elicitation itself, and the tool gets the answer', async () => {
      const answers: Answers = { asked: [] };
      const client = await down.connect(ALICE, BOTH, answers);
      try {
        const result = await client.callTool({ name: up.elicit.tool, arguments: up.elicit.args });
        expect(answers.asked, textOf(result)).toHaveLength(1);
        expect(answers.asked[0]).toMatch(/^elicit: /);
        expect(textOf(result)).toMatch(/accept/);
        expect(textOf(result)).toMatch(/Ada/);
        expect((result as { isError?: boolean }).isError ?? false).toBe(false);
      } finally {
        await client.close();
      }
    });

    it("answers the upstream sampling request with its own model's message", async () => {
      const answers: Answers = { asked: [] };
      const client = await down.connect(ALICE, BOTH, answers);
      try {
        const result = await client.callTool({ name: up.sample.tool, arguments: up.sample.args });
        expect(answers.asked, textOf(result)).toEqual([expect.stringMatching(/^sample: .*haiku/i)]);
        expect(textOf(result)).toMatch(/Autumn moonlight/);
      } finally {
        await client.close();
      }
    });

    it("never sees a request the caller's rules do not allow: the server gets a decline", async () => {
      const answers: Answers = { asked: [] };
      const client = await down.connect(BOB, BOTH, answers);
      try {
        const before = audit.records.length;
        const result = await client.callTool({ name: up.elicit.tool, arguments: up.elicit.args });
        expect(answers.asked).toEqual([]);
        expect(textOf(result)).toMatch(/decline/i);
        const refused = audit.records
          .slice(before)
          .find((r) => r.resource.endsWith(':elicitation') && r.principal === 'bob');
        expect(refused?.allowed).toBe(false);
      } finally {
        await client.close();
      }
    });
  });

  it('declines an elicitation for a client that did not declare elicitation, without asking it', async () => {
    const answers: Answers = { asked: [] };
    const client = await down.connect(ALICE, { sampling: {} }, answers);
    try {
      const result = await client.callTool({ name: 'mcp__modern__ask', arguments: {} });
      expect(answers.asked).toEqual([]);
      expect(textOf(result)).toMatch(/decline/);
    } finally {
      await client.close();
    }
  });
});

describe('calls of several clients at once', () => {
  async function twoClients() {
    const ada: Answers = { asked: [] };
    const grace: Answers = { asked: [] };
    const clients = await Promise.all([
      modernClient(ALICE, BOTH, ada, 'Ada'),
      modernClient(ALICE, BOTH, grace, 'Grace'),
    ]);
    return { ada, grace, clients };
  }
  const own = ['Ada', 'Grace', 'Ada', 'Grace'];

  it('relay each request of a 2026-07-28 server to the client whose call made it', async () => {
    // The server's input requests are answered inside the call that got them, so the call's caller is known.
    const { ada, grace, clients } = await twoClients();
    try {
      const results = await Promise.all(
        own.map((_, i) =>
          (clients[i % 2] as ModernClient).callTool({ name: 'mcp__modern__ask', arguments: {} }),
        ),
      );
      const names = results.map((r) => /(Ada|Grace)/.exec(textOf(r))?.[1]);
      expect(names, results.map(textOf).join(' / ')).toEqual(own);
      expect([ada.asked.length, grace.asked.length]).toEqual([2, 2]);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it('never relay a request of a 2025-era server to another caller: one that cannot be attributed is declined', async () => {
    // A 2025-era server's request names no call: with several callers in flight to it, none is asked.
    const { ada, grace, clients } = await twoClients();
    const tool = 'mcp__legacy__trigger-elicitation-request';
    try {
      const results = await Promise.all(
        own.map((_, i) => (clients[i % 2] as ModernClient).callTool({ name: tool, arguments: {} })),
      );
      results.forEach((result, i) => {
        const text = textOf(result);
        expect(text).not.toContain(own[i] === 'Ada' ? 'Grace' : 'Ada');
        expect(text.includes(own[i] as string) || /decline/i.test(text), text).toBe(true);
      });
      const answered = results.filter((r, i) => textOf(r).includes(own[i] as string));
      expect(ada.asked.length + grace.asked.length).toBe(answered.length);
      // One at a time, each is asked.
      for (const [i, client] of clients.entries()) {
        const result = await client.callTool({ name: tool, arguments: {} });
        expect(textOf(result)).toContain(own[i]);
      }
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });
});

describe("the caller's ask rules", () => {
  async function approving(approve: boolean | 'decline', asked: string[]) {
    const client = new ModernClient(
      { name: 'approver', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } },
    );
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params.message);
      return approve === 'decline' ? { action: 'decline' } : { action: 'accept', content: { approve } };
    });
    await client.connect(
      new ModernHttp(url, { requestInit: { headers: { authorization: `Bearer ${ALICE}` } } }),
    );
    return client;
  }

  it('ask the calling client, and the call goes through only when it approves', async () => {
    const asked: string[] = [];
    for (const [answer, passes] of [
      [true, true],
      [false, false],
      ['decline', false],
    ] as const) {
      const client = await approving(answer, asked);
      try {
        const result = await client.callTool({ name: 'mcp__modern__echo', arguments: { text: 'approved?' } });
        expect(textOf(result).includes('approved?') && result.isError !== true, textOf(result)).toBe(passes);
        if (!passes) expect(textOf(result)).toMatch(/CAPABILITY_DENIED/);
      } finally {
        await client.close();
      }
    }
    expect(asked).toHaveLength(3);
    expect(asked[0]).toMatch(/Allow execute of modern\/echo\?/);
    expect(asked[0]).toContain('"text":"approved?"');
    expect(asked[0]).toContain('confirm-echo');
  });

  it('deny for a client that cannot be asked', async () => {
    const answers: Answers = { asked: [] };
    const client = await legacyClient(ALICE, BOTH, answers);
    try {
      const result = await client.callTool({ name: 'mcp__modern__echo', arguments: { text: 'x' } });
      expect(result).toMatchObject({ isError: true });
      expect(textOf(result)).toMatch(/CAPABILITY_DENIED/);
      expect(answers.asked).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

describe('a 2025-11-25 client over HTTP', () => {
  // The gateway serves 2025-era HTTP clients without a session (each request stands alone, so no sticky
  // sessions are needed): there is no channel to ask them anything. They are never asked, and the upstream
  // server is told no; over stdio a 2025-era client is asked (see serve-cli.test.ts).
  it.each(upstreams)(
    'is never asked for a $era upstream server: it declines, and sampling is refused',
    async (up) => {
      const answers: Answers = { asked: [] };
      const client = await legacyClient(ALICE, BOTH, answers);
      try {
        const elicited = await client.callTool({ name: up.elicit.tool, arguments: up.elicit.args });
        expect(textOf(elicited)).toMatch(/decline/i);
        const sampled = await client.callTool({ name: up.sample.tool, arguments: up.sample.args });
        expect(textOf(sampled)).toMatch(/cannot be asked/);
        expect(answers.asked).toEqual([]);
      } finally {
        await client.close();
      }
    },
  );
});

describe('a 2026-07-28 client answering a relayed request', () => {
  const raw = (params: Record<string, unknown>, key = ALICE) => rawToolCall(url, key, params);

  it('gets the question as input_required and the result after answering it, in two requests', async () => {
    const first = await raw({ name: 'mcp__modern__ask', arguments: {} });
    expect(first.result?.resultType).toBe('input_required');
    const requests = first.result?.inputRequests as Record<string, { method: string }>;
    const [key] = Object.keys(requests);
    expect(requests[key as string]?.method).toBe('elicitation/create');
    const second = await raw({
      name: 'mcp__modern__ask',
      arguments: {},
      inputResponses: { [key as string]: { action: 'accept', content: { name: 'Grace' } } },
      requestState: first.result?.requestState,
    });
    expect(textOf(second.result)).toMatch(/Grace/);
    expect(relay.waiting).toBe(0);
  });

  it('refuses state minted for another caller, and the call it belongs to still gets its answer', async () => {
    const first = await raw({ name: 'mcp__modern__ask', arguments: {} });
    const state = first.result?.requestState;
    const [key] = Object.keys(first.result?.inputRequests as object);
    const stolen = await raw(
      {
        name: 'mcp__modern__ask',
        arguments: {},
        inputResponses: { [key as string]: { action: 'accept', content: { name: 'Mallory' } } },
        requestState: state,
      },
      BOB,
    );
    expect(stolen.result?.isError).toBe(true);
    expect(textOf(stolen.result)).toMatch(/does not hold/);
    const own = await raw({
      name: 'mcp__modern__ask',
      arguments: {},
      inputResponses: { [key as string]: { action: 'accept', content: { name: 'Grace' } } },
      requestState: state,
    });
    expect(textOf(own.result)).toMatch(/Grace/);
    expect(textOf(own.result)).not.toMatch(/Mallory/);
  });

  it('refuses altered state with a tool error that says to call again', async () => {
    const result = await raw({
      name: 'mcp__modern__ask',
      arguments: {},
      inputResponses: { r1: { action: 'accept', content: { name: 'Eve' } } },
      requestState: 'v1.forged.state',
    });
    expect(result.result?.isError).toBe(true);
    expect(textOf(result.result)).toMatch(/call the tool again/);
  });
});
