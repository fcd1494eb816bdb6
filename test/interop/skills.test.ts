/**
 * Issue 42, "Skills and other context": the Skills extension (`io.modelcontextprotocol/skills`, SEP-2640) through the
 * manager, against a real server of our own built on the SDK's SkillsExtension (test/fixtures/servers/skills.mjs),
 * one contract over stdio and over Streamable HTTP: the listing, reads gated on `mcp:{server}:skill:{name}` / `read`
 * (default deny, audited, the decision on the span), every file verified against the skill's entry, and what a read
 * brings into a session recorded in its flow state.
 */
import { createHash } from 'node:crypto';
import { SKILLS_EXTENSION_ID } from '@modelcontextprotocol/client/ext/skills';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MCPServerConfigInput } from '../../src/config/servers.js';
import { SkillIntegrityError } from '../../src/errors.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { SKILLS_EXTENSION } from '../../src/protocol/client.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { FlowState } from '../../src/security/flow.js';
import type { AccessRequest, AuditRecord } from '../../src/security/types.js';
import { createFixtureLog, type FixtureLog, nodeFixture } from '../helpers/fixtures.js';
import { type HttpServerProcess, startModernHttp } from '../helpers/http-fixtures.js';
import { recordSpans } from '../helpers/otel.js';

const DECISION = 'interlock.capability.decision';

interface Variant {
  transport: 'stdio' | 'http';
  setup(log: FixtureLog): Promise<{ config: MCPServerConfigInput; close(): Promise<void> }>;
}

const variants: Variant[] = [
  {
    transport: 'stdio',
    setup: async (log) => ({
      config: { name: 'skills', transport: 'stdio', ...nodeFixture('skills'), env: log.env },
      close: async () => {},
    }),
  },
  {
    transport: 'http',
    setup: async (log) => {
      const server: HttpServerProcess = await startModernHttp({ fixture: 'skills', env: log.env });
      return {
        config: { name: 'skills', transport: 'http', url: server.mcpUrl },
        close: () => server.close(),
      };
    },
  },
];

const sha256 = (text: string) => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;

let otel: ReturnType<typeof recordSpans>;
beforeAll(() => {
  otel = recordSpans();
});
afterAll(async () => {
  await otel.close();
});

/** The decision events of the last span named `name`. */
function decisionsOn(name: string): Record<string, unknown>[] {
  const span = otel
    .spans()
    .filter((s) => s.name === name)
    .at(-1);
  expect(span, `a span named ${name}`).toBeDefined();
  return (span?.events ?? []).filter((e) => e.name === DECISION).map((e) => ({ ...e.attributes }));
}

describe.each(variants)('skills over $transport', ({ setup }) => {
  let manager: MCPClientManager;
  let server: Awaited<ReturnType<Variant['setup']>>;
  let log: FixtureLog;
  const audit: AuditRecord[] = [];
  const requests: AccessRequest[] = [];

  beforeAll(async () => {
    log = createFixtureLog();
    server = await setup(log);
    const capabilities = CapabilitySet.fromPolicy({
      version: 1,
      rules: [
        { id: 'pdf', effect: 'allow', resource: 'mcp:skills:skill:pdf-processing', actions: 'read' },
        { id: 'tampered', effect: 'allow', resource: 'mcp:skills:skill:tampered', actions: 'read' },
        {
          id: 'raw',
          effect: 'allow',
          resource: 'mcp-resource:skills:skill://tampered/SKILL.md',
          actions: 'read',
        },
        { id: 'envelope', effect: 'allow', resource: 'mcp:skills:request_envelope', actions: 'execute' },
        { id: 'acme', effect: 'allow', resource: 'mcp:skills:skill:acme/*', actions: 'read' },
      ],
    });
    manager = new MCPClientManager({
      capabilities,
      // Skills' content is untrusted text that enters the model's context (issue 42).
      flowLabels: {
        labelsFor: (resource: string) => ({
          content: resource.includes(':skill:') ? ['untrusted'] : [],
          sink: [],
        }),
      },
      tracer: otel.tracer,
      audit: {
        write: (record, request) => {
          audit.push(record);
          if (request !== undefined) requests.push(request);
        },
      },
    });
    await manager.connectServer(server.config);
  });

  afterAll(async () => {
    await manager?.close();
    await server?.close();
    await log?.close();
  });

  it('declares the Skills extension in the client capabilities it sends', async () => {
    expect(SKILLS_EXTENSION).toBe(SKILLS_EXTENSION_ID);
    const envelope = JSON.parse(await manager.executeTool('mcp__skills__request_envelope', {}));
    const capabilities =
      envelope['io.modelcontextprotocol/clientCapabilities'] ?? envelope.clientCapabilities;
    expect(capabilities).toMatchObject({ extensions: { [SKILLS_EXTENSION_ID]: {} } });
  });

  it('lists every skill with the name and resource its reads are decided on, and reads no file to do so', async () => {
    const skills = await manager.listSkills('skills');
    expect(skills.map((s) => [s.name, s.resource, s.frontmatter.name])).toEqual(
      expect.arrayContaining([
        ['pdf-processing', 'mcp:skills:skill:pdf-processing', 'pdf-processing'],
        ['acme/billing/refunds', 'mcp:skills:skill:acme/billing/refunds', 'refunds'],
        ['secret-plans', 'mcp:skills:skill:secret-plans', 'secret-plans'],
        ['tampered', 'mcp:skills:skill:tampered', 'tampered'],
      ]),
    );
    expect(skills).toHaveLength(4);
    const pdf = skills.find((s) => s.name === 'pdf-processing');
    expect(pdf?.resources).toEqual([
      expect.objectContaining({
        uri: 'skill://pdf-processing/SKILL.md',
        digest: expect.stringMatching(/^sha256:/),
      }),
      expect.objectContaining({ uri: 'skill://pdf-processing/references/FORMS.md' }),
    ]);
    expect(log.entries().filter((e) => e.method === 'resources/read')).toEqual([]);
  });

  it('reads an allowed skill file after verifying it, audited and traced with its decision', async () => {
    const [pdf] = (await manager.listSkills('skills')).filter((s) => s.name === 'pdf-processing');
    if (pdf === undefined) throw new Error('pdf-processing is not listed');
    const manifest = await manager.readSkill('skills', pdf);
    expect(manifest).toMatchObject({
      server: 'skills',
      name: 'pdf-processing',
      uri: 'skill://pdf-processing/SKILL.md',
    });
    expect(manifest.text).toContain('Read references/FORMS.md before filling a form.');
    const forms = await manager.readSkill('skills', pdf, { file: 'references/FORMS.md' });
    expect(forms.text).toBe('Fill the fields top to bottom; the signature field comes last.\n');
    expect(forms.bytes.byteLength).toBe(forms.text?.length);
    expect(audit.filter((r) => r.resource === 'mcp:skills:skill:pdf-processing').at(-1)).toMatchObject({
      action: 'read',
      effect: 'allow',
      allowed: true,
      ruleId: 'pdf',
      server: 'skills',
    });
    expect(decisionsOn('skills/read pdf-processing')).toEqual([
      expect.objectContaining({ 'interlock.effect': 'allow', 'interlock.rule_id': 'pdf' }),
    ]);
  });

  it('reads a skill named by its SKILL.md URI, fetching its entry with skills/get', async () => {
    const file = await manager.readSkill('skills', 'skill://acme/billing/refunds/SKILL.md');
    expect(file).toMatchObject({
      name: 'acme/billing/refunds',
      skill: 'skill://acme/billing/refunds/SKILL.md',
    });
    expect(file.text).toContain('Refund the payment in full.');
    expect(log.entries().some((e) => e.method === 'skills/get')).toBe(true);
  });

  it('denies a skill no rule allows, audits the default deny and sends nothing', async () => {
    const before = log.entries().length;
    const [secret] = (await manager.listSkills('skills')).filter((s) => s.name === 'secret-plans');
    if (secret === undefined) throw new Error('secret-plans is not listed');
    const listed = log.entries().length;
    await expect(manager.readSkill('skills', secret)).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
      decision: { effect: 'default-deny' },
    });
    expect(log.entries()).toHaveLength(listed);
    expect(listed).toBeGreaterThan(before);
    expect(audit.at(-1)).toMatchObject({
      resource: 'mcp:skills:skill:secret-plans',
      action: 'read',
      effect: 'default-deny',
      allowed: false,
    });
    expect(decisionsOn('skills/read secret-plans')).toEqual([
      expect.objectContaining({ 'interlock.effect': 'default-deny', 'interlock.allowed': false }),
    ]);
  });

  it('refuses a file whose digest differs from its entry, naming both digests to the operator only', async () => {
    const [tampered] = (await manager.listSkills('skills')).filter((s) => s.name === 'tampered');
    if (tampered === undefined || tampered.resources === 'dynamic') throw new Error('tampered is not listed');
    const listedDigest = tampered.resources[0]?.digest ?? '';
    const served = await manager.readResource('skills', 'skill://tampered/SKILL.md');
    const servedText = (served.contents[0] as { text: string }).text;
    const servedDigest = sha256(servedText);
    expect(servedDigest).not.toBe(listedDigest);
    const flow = new FlowState();
    const error = await manager.readSkill('skills', tampered, { flow }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SkillIntegrityError);
    expect(error).toMatchObject({
      code: 'SKILL_VERIFICATION_FAILED',
      reason: 'digest',
      uri: 'skill://tampered/SKILL.md',
      server: 'skills',
    });
    const { message, operatorHint } = error as SkillIntegrityError;
    expect(operatorHint).toContain(listedDigest);
    expect(operatorHint).toContain(servedDigest);
    expect(message).toContain('skill://tampered/SKILL.md');
    expect(message).not.toContain('sha256:');
    expect(message).not.toContain('Evil');
    // Nothing of it entered the session.
    expect(flow.snapshot()).toEqual({ labels: [], sources: [] });
  });

  it('refuses a file the skill entry does not list, before asking the server for it', async () => {
    const [pdf] = (await manager.listSkills('skills')).filter((s) => s.name === 'pdf-processing');
    if (pdf === undefined) throw new Error('pdf-processing is not listed');
    const reads = () => log.entries().filter((e) => e.method === 'resources/read').length;
    const before = reads();
    await expect(manager.readSkill('skills', pdf, { file: 'scripts/run.sh' })).rejects.toMatchObject({
      code: 'SKILL_VERIFICATION_FAILED',
      reason: 'unlisted',
    });
    expect(reads()).toBe(before);
  });

  it("records a verified file into the session's flow state under the skill's resource", async () => {
    const flow = new FlowState();
    const [pdf] = (await manager.listSkills('skills')).filter((s) => s.name === 'pdf-processing');
    if (pdf === undefined) throw new Error('pdf-processing is not listed');
    await manager.readSkill('skills', pdf, { file: 'references/FORMS.md', flow });
    expect(flow.snapshot()).toEqual({ labels: ['untrusted'], sources: ['mcp:skills:skill:pdf-processing'] });
  });

  it("decides a read through a sub-agent's view by the view's narrower set", async () => {
    const child = manager.capabilities.derive((set) => set.grant('mcp:skills:skill:acme/*', 'read'));
    const view = manager.withCapabilities(child, { agent: 'sub-agent' });
    const [pdf] = (await manager.listSkills('skills')).filter((s) => s.name === 'pdf-processing');
    if (pdf === undefined) throw new Error('pdf-processing is not listed');
    await expect(view.readSkill('skills', pdf)).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
      resource: 'mcp:skills:skill:pdf-processing',
    });
    await expect(view.readSkill('skills', 'skill://acme/billing/refunds/SKILL.md')).resolves.toMatchObject({
      name: 'acme/billing/refunds',
    });
  });

  it("decides a read with the session's flow state in the check context (CONTRACT 4)", async () => {
    const flow = new FlowState();
    flow.record('mcp:web:fetch', ['untrusted'], 'text from the web');
    await manager.readSkill('skills', 'skill://acme/billing/refunds/SKILL.md', { flow, agent: 'planner' });
    const decided = requests.at(-1);
    expect(decided).toMatchObject({ resource: 'mcp:skills:skill:acme/billing/refunds', action: 'read' });
    expect(decided?.context?.flow).toBe(flow);
    expect(decided?.context?.agent).toBe('planner');
  });
});

describe('a server without the Skills extension', () => {
  it('has no skills, and a skill read by URI is refused without asking it', async () => {
    await using log = createFixtureLog();
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:modern:skill:*', 'read');
    await using manager = new MCPClientManager({ capabilities });
    await manager.connectServer({
      name: 'modern',
      transport: 'stdio',
      ...nodeFixture('modern'),
      env: log.env,
    });
    await expect(manager.listSkills('modern')).resolves.toEqual([]);
    await expect(manager.readSkill('modern', 'skill://pdf-processing/SKILL.md')).rejects.toMatchObject({
      code: 'SERVER_ERROR',
      server: 'modern',
    });
    expect(log.entries().some((e) => e.method === 'tools/list')).toBe(true);
    expect(
      log.entries().filter((e) => e.method?.startsWith('skills/') || e.method === 'resources/read'),
    ).toEqual([]);
  });
});
