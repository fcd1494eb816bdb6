/**
 * Where labels come from (issue 42, CONTRACT 2): the policy's `labels` section, the project file's per-server labels,
 * and defaults from tool annotations, which can only add labels; bad names and patterns are coded errors naming
 * the entry and field.
 */
import { describe, expect, it } from 'vitest';
import { parseServerConfig } from '../../src/config/servers.js';
import { ErrorCode } from '../../src/errors.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { FlowLabels, serverLabelsOf } from '../../src/security/flow-labels.js';

const READ_ONLY_CLOSED = { readOnlyHint: true, openWorldHint: false };

function thrown(fn: () => unknown): { code?: string; message: string } {
  try {
    fn();
  } catch (err) {
    return err as { code?: string; message: string };
  }
  throw new Error('expected a throw');
}

describe('FlowLabels', () => {
  it('gives a tool every label its matching policy entries declare, content and sink apart', () => {
    const labels = new FlowLabels({
      labels: [
        { resource: 'mcp:mail:read_*', labels: ['private', 'untrusted'] },
        { resource: 'mcp:mail:send_email', sink: ['egress'] },
        { resource: 'mcp:mail:*', labels: ['mail'] },
      ],
    });
    expect(labels.labelsFor('mcp:mail:read_inbox', READ_ONLY_CLOSED)).toEqual({
      content: ['mail', 'private', 'untrusted'],
      sink: [],
      all: ['mail', 'private', 'untrusted'],
    });
    expect(labels.labelsFor('mcp:mail:send_email', { ...READ_ONLY_CLOSED, readOnlyHint: false })).toEqual({
      content: ['mail'],
      sink: ['destructive', 'egress', 'write'],
      all: ['destructive', 'egress', 'mail', 'write'],
    });
  });

  it('derives the MCP defaults for a tool that declares no annotations: untrusted, write, egress, destructive', () => {
    const labels = new FlowLabels();
    expect(labels.labelsFor('mcp:web:fetch')).toEqual({
      content: ['untrusted'],
      sink: ['destructive', 'egress', 'write'],
      all: ['destructive', 'egress', 'untrusted', 'write'],
    });
    expect(labels.labelsFor('tool:search', { openWorldHint: false })).toMatchObject({
      content: [],
      sink: ['destructive', 'write'],
    });
    expect(labels.labelsFor('mcp:fs:read_file', READ_ONLY_CLOSED).all).toEqual([]);
    expect(labels.labelsFor('mcp:fs:delete', { readOnlyHint: false, destructiveHint: false }).sink).toEqual([
      'egress',
      'write',
    ]);
    // A hint that is not a boolean counts as absent, so it takes the default.
    expect(
      labels.labelsFor('mcp:fs:odd', { readOnlyHint: 'yes' as unknown as boolean, openWorldHint: false })
        .sink,
    ).toEqual(['destructive', 'write']);
  });

  it('derives nothing for what is not a tool: resources, prompts and skills', () => {
    const labels = new FlowLabels();
    expect(labels.labelsFor('mcp-resource:docs:file:///a.txt').all).toEqual([]);
    expect(labels.labelsFor('mcp-prompt:docs:summarize').all).toEqual([]);
    expect(labels.labelsFor('mcp:docs:skill:review').all).toEqual([]);
  });

  it('lets a lying server add labels but never remove one the operator declared', () => {
    const labels = new FlowLabels({
      labels: [{ resource: 'mcp:web:*', labels: ['untrusted'], sink: ['egress'] }],
    });
    // The server claims a harmless, closed-world, read-only tool.
    expect(labels.labelsFor('mcp:web:fetch', READ_ONLY_CLOSED)).toMatchObject({
      content: ['untrusted'],
      sink: ['egress'],
    });
  });

  it('turns hints off for one target or everywhere, keeping the declared labels', () => {
    const perTarget = new FlowLabels({
      labels: [
        { resource: 'mcp:calc:*', hints: false },
        { resource: 'mcp:calc:add', sink: ['write'] },
      ],
    });
    expect(perTarget.labelsFor('mcp:calc:add').all).toEqual(['write']);
    expect(perTarget.labelsFor('mcp:other:x').all).toContain('egress');
    const off = new FlowLabels({ flow: { hints: false } });
    expect(off.labelsFor('mcp:web:fetch').all).toEqual([]);
    expect(off.hints).toBe(false);
  });

  it("adds a server's labels from the project file to everything it returns, and its sink to its tools", () => {
    const config = parseServerConfig({
      name: 'crm',
      transport: 'stdio',
      command: 'crm-server',
      labels: ['private', 'tenant-a'],
      sink: ['egress'],
    });
    const labels = new FlowLabels({ flow: { hints: false } }).withServers(serverLabelsOf([config]));
    expect(labels.labelsFor('mcp:crm:lookup')).toEqual({
      content: ['private', 'tenant-a'],
      sink: ['egress'],
      all: ['egress', 'private', 'tenant-a'],
    });
    expect(labels.labelsFor('mcp-resource:crm:crm://accounts/1')).toMatchObject({
      content: ['private', 'tenant-a'],
      sink: [],
    });
    expect(labels.labelsFor('mcp-prompt:crm:brief').content).toEqual(['private', 'tenant-a']);
    expect(labels.labelsFor('mcp:other:lookup').all).toEqual([]);
  });

  it('answers the same frozen labels for the same target and annotations', () => {
    const labels = new FlowLabels();
    const first = labels.labelsFor('mcp:web:fetch', { openWorldHint: true });
    expect(labels.labelsFor('mcp:web:fetch', { openWorldHint: true })).toBe(first);
    expect(labels.labelsFor('mcp:web:fetch', { openWorldHint: false })).not.toBe(first);
    expect(Object.isFrozen(first.all)).toBe(true);
  });

  it('refuses a bad label name or pattern with INVALID_POLICY naming the entry and field', () => {
    const name = thrown(
      () => new FlowLabels({ labels: [{ resource: 'mcp:a:*', labels: ['ok', 'not ok'] }] }),
    );
    expect(name.code).toBe(ErrorCode.INVALID_POLICY);
    expect(name.message).toMatch(/labels\[0\]\.labels\[1\].*a label is 1-64 characters/);
    const pattern = thrown(() => new FlowLabels({ labels: [{ resource: 'nope:x', sink: ['egress'] }] }));
    expect(pattern.code).toBe(ErrorCode.INVALID_POLICY);
    expect(pattern.message).toMatch(/labels\[0\]\.resource.*unknown scheme/);
    const empty = thrown(() => new FlowLabels({ labels: [{ resource: 'mcp:a:*' }] }));
    expect(empty.message).toMatch(/labels\[0\].*needs labels, sink or hints/);
    const settings = thrown(() => new FlowLabels({ flow: { minFragmentLength: 2 } }));
    expect(settings.message).toMatch(/flow\.minFragmentLength/);
  });

  it('refuses a bad server label with INVALID_CONFIG naming the server and field', () => {
    const bad = thrown(() => new FlowLabels({ servers: { crm: { sink: ['e gress'] } } }));
    expect(bad.code).toBe(ErrorCode.INVALID_CONFIG);
    expect(bad.message).toMatch(/mcpServers\.crm\.sink\[0\]/);
    const config = thrown(() =>
      parseServerConfig({ name: 'crm', transport: 'stdio', command: 'x', labels: ['tenant/a'] }),
    );
    expect(config.code).toBe(ErrorCode.INVALID_CONFIG);
    expect(config.message).toMatch(/labels/);
  });

  it('makes sessions with the policy flow settings', () => {
    const flow = new FlowLabels({ flow: { minFragmentLength: 32, windowSize: 8 } }).createFlowState();
    expect([flow.minFragmentLength, flow.windowSize]).toEqual([32, 8]);
  });
});

describe('CapabilitySet.flowLabels', () => {
  const policy = {
    version: 1,
    labels: [{ resource: 'mcp:mail:read_*', labels: ['private'] }],
    flow: { minFragmentLength: 24 },
    rules: [{ id: 'read', effect: 'allow', resource: 'mcp:mail:*', actions: 'execute' }],
  };

  it("resolves with the policy's sections and the set's server labels, and round-trips them through toJSON", () => {
    const set = CapabilitySet.fromPolicy(policy, { serverLabels: { mail: { labels: ['tenant-a'] } } });
    expect(set.flowLabels.labelsFor('mcp:mail:read_inbox', READ_ONLY_CLOSED).content).toEqual([
      'private',
      'tenant-a',
    ]);
    expect(set.flowLabels.flowOptions.minFragmentLength).toBe(24);
    const json = set.toJSON();
    expect(json).toMatchObject({ labels: policy.labels, flow: policy.flow });
    expect(
      CapabilitySet.fromPolicy(json).flowLabels.labelsFor('mcp:mail:read_x', READ_ONLY_CLOSED).content,
    ).toEqual(['private']);
  });

  it('takes the new labels with replaceRules, keeps the server labels, and hands derived sets the parent ones', () => {
    const set = CapabilitySet.fromPolicy(policy, { serverLabels: { mail: { labels: ['tenant-a'] } } });
    const child = set.derive([]);
    set.replaceRules({ ...policy, labels: [{ resource: 'mcp:mail:*', labels: ['secret'] }] });
    expect(set.flowLabels.labelsFor('mcp:mail:read_inbox', READ_ONLY_CLOSED).content).toEqual([
      'secret',
      'tenant-a',
    ]);
    expect(child.flowLabels).toBe(set.flowLabels);
  });

  it('refuses a policy whose labels section is bad, naming it', () => {
    const bad = thrown(() =>
      CapabilitySet.fromPolicy({ ...policy, labels: [{ resource: 'mcp:mail:*', labels: ['bad label'] }] }),
    );
    expect(bad.code).toBe(ErrorCode.INVALID_POLICY);
    expect(bad.message).toMatch(/labels\[0\]\.labels\[0\]/);
  });
});
