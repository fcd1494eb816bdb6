/**
 * Requests servers send us (elicitation, sampling, roots), on both protocol eras: a 2026-07-28 server asks
 * through Multi Round-Trip Requests (the modern fixture), a 2025-11-25 server through server-to-client
 * requests (server-everything). Each request is decided by the CapabilitySet on `mcp:{server}:{kind}` /
 * `request` and audited; a denied one is refused the protocol's way and the app's handler is never asked.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MCPServerConfigInput } from '../../src/config/servers.js';
import { ConfigError, type InterlockError } from '../../src/errors.js';
import { MCPClientManager, type MCPClientManagerOptions } from '../../src/interop/manager.js';
import { MemoryAuditSink } from '../../src/security/audit.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { nodeFixture } from '../helpers/fixtures.js';
import { EVERYTHING_BIN } from '../helpers/http-fixtures.js';

interface Era {
  era: string;
  server: MCPServerConfigInput;
  /** Tool that elicits; `name` is asked for, other fields have schema defaults. */
  elicit: {
    tool: string;
    args: Record<string, unknown>;
    accepted: RegExp;
    declined: RegExp;
    defaulted: RegExp;
  };
  sample: { tool: string; args: Record<string, unknown>; refused: RegExp };
  roots: { tool: string };
}

const eras: Era[] = [
  {
    era: '2026-07-28',
    server: { name: 'srv', transport: 'stdio', ...nodeFixture('modern') },
    elicit: {
      tool: 'ask',
      args: {},
      accepted: /"action":"accept".*"name":"Ada"/,
      declined: /"action":"decline"/,
      defaulted: /"color":"blue"/,
    },
    // 2026: the SDK fails the tool call with our own coded refusal.
    sample: {
      tool: 'sample',
      args: {},
      refused:
        /^thrown: CAPABILITY_DENIED Interlock's policy refused the sampling request server 'srv' made during this call \(the refusal is the client's, not the server's\): No rule allows 'request' on 'mcp:srv:sampling'/,
    },
    roots: { tool: 'list_roots' },
  },
  {
    era: '2025-11-25',
    server: { name: 'srv', transport: 'stdio', command: process.execPath, args: [EVERYTHING_BIN, 'stdio'] },
    elicit: {
      tool: 'trigger-elicitation-request',
      args: {},
      accepted: /"action": "accept"[\s\S]*"name": "Ada"/,
      declined: /decline/i,
      // server-everything's schema gives `integer` the default 42 (SEP-1034).
      defaulted: /"integer": 42/,
    },
    // 2025: the server reports our JSON-RPC error in its tool result.
    sample: {
      tool: 'trigger-sampling-request',
      args: { prompt: 'A haiku, please.', maxTokens: 50 },
      refused:
        /MCP error -1: The client \(Interlock\) refused this sampling request by its policy: No rule allows 'request' on 'mcp:srv:sampling'/,
    },
    roots: { tool: 'get-roots-list' },
  },
];

const ROOTS = [{ uri: 'file:///tmp/project', name: 'project' }];

describe.each(eras)('server requests on protocol $era', (era) => {
  let manager: MCPClientManager | undefined;
  const asked: string[] = [];

  function connect(grants: ('elicitation' | 'sampling' | 'roots')[]) {
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:srv:*', 'execute');
    for (const kind of grants) capabilities.grant(`mcp:srv:${kind}`, 'request');
    const audit = new MemoryAuditSink();
    const options: MCPClientManagerOptions = {
      capabilities,
      audit,
      onElicitation: (request) => {
        asked.push(`elicitation: ${request.message}`);
        return { action: 'accept', content: { name: 'Ada' } };
      },
      onSampling: (request) => {
        asked.push(`sampling: ${request.maxTokens}`);
        return { role: 'assistant', model: 'test-model', content: { type: 'text', text: 'old pond' } };
      },
      roots: (context) => {
        asked.push(`roots: ${context.server}`);
        return ROOTS;
      },
    };
    manager = new MCPClientManager(options);
    return { manager, audit };
  }

  // A server may list roots whenever it likes (after initialize, say): tests of other requests leave that out.
  const notRoots = () => asked.filter((entry) => !entry.startsWith('roots: '));

  // The decisions on requests other than roots (which the server may list whenever it likes, and is decided then).
  const requestRecords = (audit: MemoryAuditSink) =>
    audit.records
      .filter((r) => r.action === 'request' && r.resource !== 'mcp:srv:roots')
      .map((r) => ({ resource: r.resource, allowed: r.allowed }));
  const rootsRecords = (audit: MemoryAuditSink) =>
    audit.records
      .filter((r) => r.action === 'request' && r.resource === 'mcp:srv:roots')
      .map((r) => ({ resource: r.resource, allowed: r.allowed }));

  afterEach(async () => {
    await manager?.close();
    manager = undefined;
    asked.length = 0;
  });

  it('answers an allowed elicitation through the handler, with the schema defaults filled in', async () => {
    const { manager: m, audit } = connect(['elicitation']);
    await m.connectServer(era.server);
    const text = await m.executeTool(`mcp__srv__${era.elicit.tool}`, era.elicit.args);
    expect(text).toMatch(era.elicit.accepted);
    expect(text).toMatch(era.elicit.defaulted);
    expect(notRoots()).toHaveLength(1);
    expect(requestRecords(audit)).toEqual([{ resource: 'mcp:srv:elicitation', allowed: true }]);
  });

  it('declines an elicitation the policy does not allow, without asking the handler', async () => {
    const { manager: m, audit } = connect([]);
    await m.connectServer(era.server);
    const text = await m.executeTool(`mcp__srv__${era.elicit.tool}`, era.elicit.args);
    expect(text).toMatch(era.elicit.declined);
    expect(text).not.toContain('Ada');
    expect(notRoots()).toEqual([]);
    expect(requestRecords(audit)).toEqual([{ resource: 'mcp:srv:elicitation', allowed: false }]);
  });

  it('samples through the handler when allowed', async () => {
    const { manager: m, audit } = connect(['sampling']);
    await m.connectServer(era.server);
    await expect(m.executeTool(`mcp__srv__${era.sample.tool}`, era.sample.args)).resolves.toContain(
      'old pond',
    );
    expect(notRoots()).toEqual(['sampling: 50']);
    expect(requestRecords(audit)).toEqual([{ resource: 'mcp:srv:sampling', allowed: true }]);
  });

  it('refuses sampling the policy does not allow: the tool fails, no made-up completion', async () => {
    const { manager: m, audit } = connect([]);
    await m.connectServer(era.server);
    const outcome = await m.executeTool(`mcp__srv__${era.sample.tool}`, era.sample.args).then(
      (text) => text,
      (err: InterlockError) => `thrown: ${err.code} ${err.message}`,
    );
    expect(outcome).toMatch(era.sample.refused);
    expect(outcome).not.toContain('old pond');
    expect(notRoots()).toEqual([]);
    expect(requestRecords(audit)).toEqual([{ resource: 'mcp:srv:sampling', allowed: false }]);
  });

  it('lists the roots when allowed and refuses them when not', async () => {
    const allowed = connect(['roots']);
    await allowed.manager.connectServer(era.server);
    await expect(allowed.manager.executeTool(`mcp__srv__${era.roots.tool}`, {})).resolves.toContain(
      'file:///tmp/project',
    );
    // At least the tool's own request; the server may list roots after initialize as well.
    expect(asked).toContain('roots: srv');
    expect(notRoots()).toEqual([]);
    await allowed.manager.close();
    asked.length = 0;

    const denied = connect([]);
    await denied.manager.connectServer(era.server);
    const outcome = await denied.manager.executeTool(`mcp__srv__${era.roots.tool}`, {}).then(
      (text) => text,
      (err: Error) => `thrown: ${err.message}`,
    );
    // The roots are computed, then each is decided: none allowed, so the server gets a refusal, not the list.
    expect(outcome).not.toContain('file:///tmp/project');
    // One decision per listing: the tool's own, and any the server made after initialize; none allowed.
    const decided = rootsRecords(denied.audit);
    expect(decided.length).toBeGreaterThanOrEqual(1);
    expect(decided).toEqual(decided.map(() => ({ resource: 'mcp:srv:roots', allowed: false })));
    expect(requestRecords(denied.audit)).toEqual([]);
  });
});

describe('server request options', () => {
  it('refuses a root that is not a file:// URI, and a handler that is not a function', () => {
    expect(() => new MCPClientManager({ roots: [{ uri: 'https://example.com/' }] })).toThrow(ConfigError);
    expect(() => new MCPClientManager({ roots: [{ uri: 'https://example.com/' }] })).toThrow(/file:\/\/ URI/);
    expect(
      () => new MCPClientManager({ onSampling: 'yes' as unknown as MCPClientManagerOptions['onSampling'] }),
    ).toThrow(/onSampling: must be a function/);
  });
});
