/**
 * What a policy can say about the requests servers make of us, against real servers: URL-mode elicitation
 * with a domain allowlist (full URL shown, punycode flagged, unsafe schemes refused, never fetched), the newer
 * enum forms with their defaults, sampling budgets (tokens, calls, models, tools offered to the sampled
 * model), which roots a server may see, a span per request, and hostile servers (input_required forever, a
 * huge requestState). The 2026-07-28 fixture asks through `input_required`; server-everything (2025-11-25)
 * asks over the connection.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { MCPServerConfigInput } from '../../src/config/servers.js';
import type { InterlockError } from '../../src/errors.js';
import type { UrlElicitationRequest } from '../../src/interop/elicitation.js';
import { MCPClientManager, type MCPClientManagerOptions } from '../../src/interop/manager.js';
import { MemoryAuditSink } from '../../src/security/audit.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { nodeFixture } from '../helpers/fixtures.js';
import { EVERYTHING_BIN, startModernHttp } from '../helpers/http-fixtures.js';
import { recordSpans } from '../helpers/otel.js';

const MODERN: MCPServerConfigInput = { name: 'srv', transport: 'stdio', ...nodeFixture('modern') };
const EVERYTHING: MCPServerConfigInput = {
  name: 'srv',
  transport: 'stdio',
  command: process.execPath,
  args: [EVERYTHING_BIN, 'stdio'],
};

let manager: MCPClientManager | undefined;
afterEach(async () => {
  await manager?.close();
  manager = undefined;
});

async function connect(server: MCPServerConfigInput, options: MCPClientManagerOptions) {
  manager = new MCPClientManager(options);
  await manager.connectServer(server);
  return manager;
}

/** The tool's text, or `thrown: CODE message`. */
const outcomeOf = (pending: Promise<string>) =>
  pending.then(
    (text) => text,
    (err: InterlockError) => `thrown: ${err.code} ${err.message}`,
  );

const decisions = (audit: MemoryAuditSink) =>
  audit.records
    .filter((r) => r.action === 'request')
    .map((r) => `${r.resource} ${r.allowed ? 'allowed' : 'denied'}`);

/** Tools allowed, plus URL-mode elicitation to the given hosts only. */
function urlPolicy(hosts: string[]) {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:srv:*', 'execute');
  capabilities.grant('mcp:srv:elicitation', 'request', {
    id: 'known-domains',
    when: { args: { mode: { equals: 'url' }, host: { oneOf: hosts } } },
  });
  return capabilities;
}

describe('URL-mode elicitation (2026-07-28)', () => {
  const seen: UrlElicitationRequest[] = [];
  afterEach(() => {
    seen.length = 0;
  });
  const options = (hosts: string[], audit = new MemoryAuditSink()): MCPClientManagerOptions => ({
    capabilities: urlPolicy(hosts),
    audit,
    onUrlElicitation: (request) => {
      seen.push(request);
      return { action: 'accept' };
    },
  });

  it('shows the handler the full URL of an allowlisted host, and the server gets the consent', async () => {
    const audit = new MemoryAuditSink();
    const m = await connect(MODERN, options(['auth.example.com'], audit));
    const url = 'https://auth.example.com/connect?state=abc&scope=read#top';
    const text = await m.executeTool('mcp__srv__ask_url', { url });
    expect(JSON.parse(text)).toEqual({ kind: 'elicit', action: 'accept' });
    expect(seen).toEqual([
      {
        message: 'Connect your account.',
        url,
        host: 'auth.example.com',
        displayHost: 'auth.example.com',
        punycode: false,
        // 2026-07-28 has no elicitationId; 2025-11-25 servers send one.
        elicitationId: undefined,
      },
    ]);
    expect(decisions(audit)).toEqual(['mcp:srv:elicitation allowed']);
  });

  it('flags a punycode host and shows its Unicode form beside it', async () => {
    const m = await connect(MODERN, options(['xn--pple-43d.com']));
    await m.executeTool('mcp__srv__ask_url', { url: 'https://xn--pple-43d.com/login' });
    expect(seen[0]).toMatchObject({ host: 'xn--pple-43d.com', displayHost: 'аpple.com', punycode: true });
  });

  it.each([
    ['a right-to-left override', 'https://example.com/\u202Egpj.exe', 'U+202E'],
    ['a soft hyphen the host parser drops', 'https://exa\u00ADmple.com/login', 'U+00AD'],
    ['a zero-width space', 'https://example.com\u200B.evil.test/', 'U+200B'],
    ['bidi isolates', 'https://example.com/\u2066a\u2069', 'U+2066'],
    ['an Arabic letter mark', 'https://example.com/\u061C', 'U+061C'],
    ['a percent-encoded override', 'https://example.com/%E2%80%AEgpj.exe', 'U+202E, percent-encoded'],
    [
      'a percent-encoded zero-width space in the host',
      'https://ex%E2%80%8Bample.com/',
      'U+200B, percent-encoded',
    ],
  ])('refuses a URL with %s before the allowlist or the handler sees it', async (_what, url, why) => {
    const audit = new MemoryAuditSink();
    const m = await connect(MODERN, options(['example.com'], audit));
    const outcome = await outcomeOf(m.executeTool('mcp__srv__ask_url', { url }));
    expect(outcome).toMatch(/^thrown: CAPABILITY_DENIED .*it asked the user to open an unsafe URL: /);
    expect(outcome).toContain(`the URL contains the invisible or formatting character ${why}`);
    expect(seen).toEqual([]);
    expect(decisions(audit)).toEqual([]);
  });

  it('refuses a message with a bidi override, and passes an encoded space in the URL', async () => {
    const m = await connect(MODERN, options(['example.com']));
    const message = 'Sign in to \u202Emoc.elgoog\u202C to continue.';
    const outcome = await outcomeOf(
      m.executeTool('mcp__srv__ask_url', { url: 'https://example.com/', message }),
    );
    expect(outcome).toContain('its message contains the invisible or formatting character U+202E');
    expect(seen).toEqual([]);
    const url = 'https://example.com/My%20Files?q=caf%C3%A9';
    await m.executeTool('mcp__srv__ask_url', { url });
    expect(seen.map((r) => r.url)).toEqual([url]);
  });

  it('declines a host outside the allowlist without asking the handler', async () => {
    const audit = new MemoryAuditSink();
    const m = await connect(MODERN, options(['auth.example.com'], audit));
    const text = await m.executeTool('mcp__srv__ask_url', { url: 'https://auth.example.com.evil.test/x' });
    expect(JSON.parse(text)).toEqual({ kind: 'elicit', action: 'decline' });
    expect(seen).toEqual([]);
    expect(decisions(audit)).toEqual(['mcp:srv:elicitation denied']);
  });

  it.each([
    ['javascript:alert(document.cookie)', /the scheme 'javascript:' is refused/],
    ['file:///etc/passwd', /the scheme 'file:' is refused/],
    ['data:text/html,<script>alert(1)</script>', /the scheme 'data:' is refused/],
    ['http://auth.example.com/login', /plain http to 'auth.example.com' is refused/],
    ['https://auth.example.com@evil.test/', /user name or password is refused/],
    [`https://auth.example.com/${'a'.repeat(9000)}`, /over the limit of 8192/],
  ])('refuses %j with a clear error before policy or handler', async (url, why) => {
    const audit = new MemoryAuditSink();
    const m = await connect(MODERN, options(['auth.example.com', 'evil.test'], audit));
    const outcome = await outcomeOf(m.executeTool('mcp__srv__ask_url', { url }));
    expect(outcome).toMatch(
      /^thrown: CAPABILITY_DENIED Interlock refused the elicitation request server 'srv' made during this call: it asked the user to open an unsafe URL: /,
    );
    expect(outcome).toMatch(why);
    expect(seen).toEqual([]);
    expect(decisions(audit)).toEqual([]);
  });

  it('never fetches the URL, not even one on loopback the user consents to', async () => {
    let hits = 0;
    const site: Server = createServer((_req, res) => {
      hits++;
      res.end('hello');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(site.address() as AddressInfo).port}/consent`;
      const m = await connect(MODERN, options(['127.0.0.1']));
      const text = await m.executeTool('mcp__srv__ask_url', { url });
      expect(JSON.parse(text)).toEqual({ kind: 'elicit', action: 'accept' });
      expect(seen.map((r) => r.url)).toEqual([url]);
      expect(hits).toBe(0);
    } finally {
      await new Promise((resolve) => site.close(resolve));
    }
  });

  it('does not declare URL mode without a URL handler, so the server cannot ask for it', async () => {
    const m = await connect(MODERN, {
      capabilities: urlPolicy(['auth.example.com']),
      onElicitation: () => ({ action: 'accept', content: {} }),
    });
    const outcome = await outcomeOf(m.executeTool('mcp__srv__ask_url', { url: 'https://auth.example.com/' }));
    expect(outcome).toMatch(/^thrown: SERVER_ERROR .*do not declare the required capability/);
  });
});

describe('URL-mode elicitation (2025-11-25, server-everything)', () => {
  it('answers an allowlisted URL, and refuses a javascript: URL with an error the server reports', async () => {
    const seen: string[] = [];
    const m = await connect(EVERYTHING, {
      capabilities: urlPolicy(['modelcontextprotocol.io']),
      onUrlElicitation: (request) => {
        seen.push(request.url);
        return { action: 'accept' };
      },
    });
    const ok = await m.executeTool('mcp__srv__trigger-url-elicitation', {
      url: 'https://modelcontextprotocol.io/specification',
    });
    expect(ok).toContain('User completed the URL elicitation flow');
    const bad = await outcomeOf(
      m.executeTool('mcp__srv__trigger-url-elicitation', { url: 'javascript:alert(1)' }),
    );
    expect(bad).toMatch(
      /The client \(Interlock\) refused this elicitation request: .*the scheme 'javascript:' is refused/,
    );
    expect(seen).toEqual(['https://modelcontextprotocol.io/specification']);
  });
});

describe('form-mode elicitation with the newer enum forms', () => {
  it('fills the defaults of titled, multi-select and plain enums the answer leaves out', async () => {
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:srv:*', 'execute');
    capabilities.grant('mcp:srv:elicitation', 'request');
    const m = await connect(MODERN, {
      capabilities,
      onElicitation: () => ({ action: 'accept', content: { crust: 'thin' } }),
    });
    const answer = JSON.parse(await m.executeTool('mcp__srv__ask_choices', {}));
    expect(answer).toEqual({
      kind: 'elicit',
      action: 'accept',
      content: { crust: 'thin', size: 'm', toppings: ['olive'], sauces: ['red'] },
    });
  });
});

describe('sampling budgets', () => {
  const asked: unknown[] = [];
  afterEach(() => {
    asked.length = 0;
  });

  function budget(samplingWithTools = true) {
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:srv:*', 'execute');
    capabilities.grant('mcp:srv:sampling', 'request', {
      id: 'sampling-budget',
      maxCalls: 2,
      per: '1h',
      when: {
        args: {
          maxTokens: { max: 500 },
          models: { each: { oneOf: ['small', 'medium'] } },
          tools: { maxLength: 2, each: { oneOf: ['search'] } },
        },
      },
    });
    const audit = new MemoryAuditSink();
    const options: MCPClientManagerOptions = {
      capabilities,
      audit,
      samplingWithTools,
      onSampling: (request) => {
        asked.push({ tools: request.tools?.map((t) => t.name), toolChoice: request.toolChoice });
        return { role: 'assistant', model: 'small', content: { type: 'text', text: 'found it' } };
      },
    };
    return { options, audit };
  }

  it('passes a request within the budget to the handler, tools and toolChoice included', async () => {
    const { options, audit } = budget();
    const m = await connect(MODERN, options);
    const text = await m.executeTool('mcp__srv__sample_with', { models: ['small'], tools: ['search'] });
    expect(text).toContain('found it');
    expect(asked).toEqual([{ tools: ['search'], toolChoice: { mode: 'auto' } }]);
    expect(decisions(audit)).toEqual(['mcp:srv:sampling allowed']);
  });

  it.each([
    ['a model outside the budget', { models: ['huge'] }],
    ['too many tokens', { maxTokens: 5000 }],
    ['a tool the policy does not offer', { tools: ['delete_everything'] }],
  ])('refuses %s as the client policy, without asking the handler', async (_what, args) => {
    const { options, audit } = budget();
    const m = await connect(MODERN, options);
    const outcome = await outcomeOf(m.executeTool('mcp__srv__sample_with', args));
    expect(outcome).toMatch(
      /^thrown: CAPABILITY_DENIED Interlock's policy refused the sampling request server 'srv' made during this call \(the refusal is the client's, not the server's\)/,
    );
    expect(asked).toEqual([]);
    expect(decisions(audit)).toEqual(['mcp:srv:sampling denied']);
  });

  it('counts sampling calls per server: the third within the hour is refused', async () => {
    const { options } = budget();
    const m = await connect(MODERN, options);
    await m.executeTool('mcp__srv__sample_with', {});
    await m.executeTool('mcp__srv__sample_with', {});
    const third = await outcomeOf(m.executeTool('mcp__srv__sample_with', {}));
    expect(third).toMatch(/^thrown: CAPABILITY_DENIED Interlock's policy refused the sampling request/);
    expect(asked).toHaveLength(2);
  });

  it('does not declare sampling with tools unless asked, so tools cannot be offered to the sampled model', async () => {
    const { options } = budget(false);
    const m = await connect(MODERN, options);
    const outcome = await outcomeOf(m.executeTool('mcp__srv__sample_with', { tools: ['search'] }));
    expect(outcome).toMatch(/^thrown: SERVER_ERROR .*do not declare the required capability/);
    await expect(m.executeTool('mcp__srv__sample_with', {})).resolves.toContain('found it');
    expect(asked).toEqual([{ tools: undefined, toolChoice: undefined }]);
  });
});

describe('a server that offers tools to the sampled model anyway (hand-written, 2025-11-25)', () => {
  it('is refused before the policy when the app did not declare sampling with tools', async () => {
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:srv:*', '*');
    let asked = 0;
    const m = await connect(
      { name: 'srv', transport: 'stdio', ...nodeFixture('hostile-requests') },
      {
        capabilities,
        onSampling: () => {
          asked++;
          return { role: 'assistant', model: 'm', content: { type: 'text', text: 'deleted' } };
        },
      },
    );
    const text = await m.executeTool('mcp__srv__sample_with_tools', {});
    expect(text).toMatch(
      /client error -32602: The client \(Interlock\) refused this sampling request: it offered tools to the sampled model, but this client does not take them/,
    );
    expect(asked).toBe(0);
  });
});

describe('which roots a server may see', () => {
  it('sends only the roots the policy allows, each decided on its path', async () => {
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:srv:*', 'execute');
    capabilities.grant('mcp:srv:roots', 'request', {
      when: { args: { path: { startsWith: '/home/ada/project' } } },
    });
    const audit = new MemoryAuditSink();
    const m = await connect(MODERN, {
      capabilities,
      audit,
      roots: [
        { uri: 'file:///home/ada/project', name: 'project' },
        { uri: 'file:///home/ada/.ssh', name: 'keys' },
        { uri: 'file:///home/ada/project/../.ssh', name: 'sneaky' },
      ],
    });
    const answer = JSON.parse(await m.executeTool('mcp__srv__list_roots', {}));
    expect(answer).toEqual({ kind: 'roots', roots: [{ uri: 'file:///home/ada/project', name: 'project' }] });
    expect(decisions(audit)).toEqual([
      'mcp:srv:roots allowed',
      'mcp:srv:roots denied',
      'mcp:srv:roots denied',
    ]);
  });
});

describe('roots computed by a function', () => {
  it('never sends a root that is not a local file:// URI, whatever the policy allows', async () => {
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:srv:*', '*');
    const m = await connect(MODERN, {
      capabilities,
      roots: () => [
        { uri: 'https://example.com/repo' },
        { uri: 'file://fileserver/share' },
        { uri: 'file:///srv/data', name: 'data' },
      ],
    });
    const answer = JSON.parse(await m.executeTool('mcp__srv__list_roots', {}));
    expect(answer.roots).toEqual([{ uri: 'file:///srv/data', name: 'data' }]);
  });
});

describe('a span per server request', () => {
  it('records kind, server and the decision (once, as an event), under the tool call that carried the request', async () => {
    const otel = recordSpans();
    try {
      const capabilities = new CapabilitySet();
      capabilities.grant('mcp:srv:*', 'execute');
      capabilities.grant('mcp:srv:elicitation', 'request', { id: 'may-ask' });
      const m = await connect(MODERN, {
        capabilities,
        tracer: otel.tracer,
        onElicitation: () => ({ action: 'accept', content: { name: 'Ada' } }),
        onSampling: () => ({ role: 'assistant', model: 'm', content: { type: 'text', text: 'never' } }),
      });
      await m.executeTool('mcp__srv__ask', {});
      await outcomeOf(m.executeTool('mcp__srv__sample', {}));
      const spans = otel.spans();
      const tool = (name: string) => spans.find((s) => s.name === `tools/call ${name}`);
      const elicit = spans.find((s) => s.name === 'elicitation/create');
      const sample = spans.find((s) => s.name === 'sampling/createMessage');
      expect(elicit?.attributes).toMatchObject({
        'mcp.method.name': 'elicitation/create',
        'interlock.server': 'srv',
        'interlock.server_request.kind': 'elicitation',
        'interlock.server_request.outcome': 'accept',
      });
      expect(sample?.attributes).toMatchObject({
        'interlock.server_request.kind': 'sampling',
        'error.type': 'CAPABILITY_DENIED',
      });
      // Issue 43: the decision is recorded once, as the event below, not a second time as span attributes.
      for (const span of [elicit, sample]) {
        expect(span?.attributes).not.toHaveProperty('interlock.decision');
        expect(span?.attributes).not.toHaveProperty('interlock.rule_id');
      }
      // Issue 15: the answer path passes the pipeline's authorize stage, so each decision is an event on the
      // request's span, named as audit records name it, with the effect the gate decided.
      const decisions = (span: typeof elicit) =>
        span?.events.filter((e) => e.name === 'interlock.capability.decision').map((e) => e.attributes);
      expect(decisions(elicit)).toEqual([
        expect.objectContaining({
          'interlock.resource': 'mcp:srv:elicitation',
          'interlock.action': 'request',
          'interlock.effect': 'allow',
          'interlock.rule_id': 'may-ask',
        }),
      ]);
      expect(decisions(sample)).toEqual([
        expect.objectContaining({ 'interlock.effect': 'default-deny', 'interlock.allowed': false }),
      ]);
      expect(elicit?.parentSpanContext?.spanId).toBe(tool('ask')?.spanContext().spanId);
      expect(sample?.parentSpanContext?.spanId).toBe(tool('sample')?.spanContext().spanId);
      // Nothing the user typed goes into the span.
      expect(JSON.stringify(spans.map((s) => s.attributes))).not.toContain('Ada');
    } finally {
      await otel.close();
    }
  });
});

describe('hostile servers', () => {
  it('stops a server that asks for input forever after a bounded number of rounds, with a clear error', async () => {
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:srv:*', 'execute');
    capabilities.grant('mcp:srv:elicitation', 'request');
    let rounds = 0;
    const m = await connect(MODERN, {
      capabilities,
      onElicitation: () => {
        rounds++;
        return { action: 'accept', content: { ok: true } };
      },
    });
    const outcome = await outcomeOf(m.executeTool('mcp__srv__ask_forever', {}));
    expect(outcome).toMatch(
      /^thrown: SERVER_ERROR Server 'srv' still asked for input after 10 rounds of the call to .*ask_forever.*Interlock stopped the call/,
    );
    expect(rounds).toBe(10);
  });

  it('refuses a round of 500 elicitations before asking anyone, and answers a round at the limit', async () => {
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:srv:*', 'execute');
    capabilities.grant('mcp:srv:elicitation', 'request');
    let asked = 0;
    const m = await connect(MODERN, {
      capabilities,
      onElicitation: () => {
        asked++;
        return { action: 'accept', content: { ok: true } };
      },
    });
    const outcome = await outcomeOf(m.executeTool('mcp__srv__ask_many', { count: 500 }));
    expect(outcome).toMatch(
      /^thrown: SERVER_ERROR .*carried 500 input requests in one round, over Interlock's limit of 16 per round; none was answered/,
    );
    expect(asked).toBe(0);
    await expect(m.executeTool('mcp__srv__ask_many', { count: 16 })).resolves.toBe('16 answers');
    expect(asked).toBe(16);
  });

  it('takes another limit from maxInputRequestsPerRound, over Streamable HTTP too', async () => {
    await using server = await startModernHttp();
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:srv:*', 'execute');
    capabilities.grant('mcp:srv:elicitation', 'request');
    let asked = 0;
    const m = await connect(
      { name: 'srv', transport: 'http', url: server.mcpUrl },
      {
        capabilities,
        maxInputRequestsPerRound: 2,
        onElicitation: () => {
          asked++;
          return { action: 'accept', content: { ok: true } };
        },
      },
    );
    const outcome = await outcomeOf(m.executeTool('mcp__srv__ask_many', { count: 3 }));
    expect(outcome).toMatch(/carried 3 input requests in one round, over Interlock's limit of 2 per round/);
    expect(asked).toBe(0);
    await expect(m.executeTool('mcp__srv__ask_many', { count: 2 })).resolves.toBe('2 answers');
    await manager?.close();
    manager = undefined;
  });

  it('refuses a maxInputRequestsPerRound that is not a positive integer', () => {
    expect(() => new MCPClientManager({ maxInputRequestsPerRound: 0 })).toThrow(/maxInputRequestsPerRound/);
  });

  it('bounds the requestState over Streamable HTTP too, and answers elicitation there', async () => {
    await using server = await startModernHttp();
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:srv:*', 'execute');
    capabilities.grant('mcp:srv:elicitation', 'request');
    const m = await connect(
      { name: 'srv', transport: 'http', url: server.mcpUrl },
      { capabilities, onElicitation: () => ({ action: 'accept', content: { name: 'Ada' } }) },
    );
    expect(JSON.parse(await m.executeTool('mcp__srv__ask', {}))).toMatchObject({ content: { name: 'Ada' } });
    const outcome = await outcomeOf(m.executeTool('mcp__srv__huge_state', { bytes: 2_000_000 }));
    expect(outcome).toMatch(
      /^thrown: SERVER_ERROR .*requestState of 2000000 characters, over Interlock's limit/,
    );
    await manager?.close();
    manager = undefined;
  });

  it('refuses to echo a huge requestState, and echoes a small one untouched', async () => {
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:srv:*', 'execute');
    const m = await connect(MODERN, { capabilities });
    await expect(m.executeTool('mcp__srv__huge_state', { bytes: 1000 })).resolves.toBe(
      'state of 1000 echoed',
    );
    const outcome = await outcomeOf(m.executeTool('mcp__srv__huge_state', { bytes: 2_000_000 }));
    expect(outcome).toMatch(
      /^thrown: SERVER_ERROR .*requestState of 2000000 characters, over Interlock's limit of 1048576; it was not sent back/,
    );
  });
});
