/**
 * The code the agent guides show is real: each snippet under docs/snippets/agents/ runs here against the
 * bundled example servers, and examples/agent.ts runs as a program, with no key and no network.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import * as createAgent from '../../docs/snippets/agents/create-agent.js';
import * as flowSnippet from '../../docs/snippets/agents/flow.js';
import * as nativeToolEvents from '../../docs/snippets/agents/native-tool-events.js';
import * as offlineTest from '../../docs/snippets/agents/offline-test.js';
import * as providers from '../../docs/snippets/agents/providers.js';
import * as sessionMixin from '../../docs/snippets/agents/session-mixin.js';
import * as spawnSnippet from '../../docs/snippets/agents/spawn.js';
import * as telemetry from '../../docs/snippets/agents/telemetry.js';
import { runAgentExample, scriptedPlan } from '../../examples/agent.js';
import { scriptedModel } from '../../src/testing/index.js';
import { descendantPids } from '../helpers/index.js';

const ROOT = resolve(import.meta.dirname, '../..');

afterEach(() => {
  expect(descendantPids(process.pid)).toEqual([]);
});

describe('agent guide snippets', () => {
  it('create-agent: MCP and native tools under one policy, the delete denied', async () => {
    const r = await createAgent.main();
    expect(r.servers).toEqual({ notes: true });
    expect(r.shown).toEqual(['mcp__notes__read_note', 'word_count']);
    expect(r.steps).toEqual([
      'mcp__notes__read_note: allow',
      'word_count: allow',
      'mcp__notes__delete_note: deny',
    ]);
    expect(r.output).toContain('may not delete');
  });

  it('session-mixin: the user’s lifecycle runs, and the servers disconnect on close', async () => {
    expect(await sessionMixin.main()).toEqual({
      notes: 'drafts/welcome\nteam/roadmap',
      transcript: ['hello ada', 'bye'],
      connected: false,
    });
  });

  it('spawn: the child is narrower, cannot exceed the parent, and shares its connection', async () => {
    expect(await spawnSnippet.main()).toEqual({
      read: 'Welcome to the notes server.',
      write: 'CAPABILITY_DENIED',
      remove: 'CAPABILITY_DENIED',
      outside: 'INVALID_POLICY',
      sharesConnections: true,
    });
  });

  it('flow: a sub-agent’s read reaches its parent, whose post is then refused; another agent’s is not', async () => {
    expect(await flowSnippet.main()).toEqual({
      before: 'posted: hello',
      lead: { labels: ['private'], sources: ['mcp:notes:read_note'] },
      after: 'CAPABILITY_DENIED',
      elsewhere: 'posted: hello',
    });
  });

  it('providers: builds every provider offline and converts a top-level oneOf', async () => {
    const r = await providers.main();
    expect(r.names).toEqual([
      'openai: openai/gpt-4o-mini',
      'ollama: openai/llama3.1',
      'vllm: openai/Qwen/Qwen2.5-7B-Instruct',
      'azure: azure.ai.openai/gpt-4o',
      'anthropic: anthropic/claude-sonnet-4-5',
      'scripted: scripted/scripted',
    ]);
    expect(r.parameters).toMatchObject({ type: 'object', required: ['from'] });
    expect(r.parameters).not.toHaveProperty('oneOf');
    expect(r.scripted).toBe('Hello from a script.');
  });

  it('offline-test: the plan, what the gate decided, and what the model was shown', async () => {
    const r = await offlineTest.main();
    expect(r.plan).toEqual([
      ['mcp__github__get_issue', 'allow', 'NOT_CONNECTED'],
      ['mcp__github__delete_repository', 'deny', 'CAPABILITY_DENIED'],
      ['mcp__github__close_issue', 'allow', 'NOT_CONNECTED'],
    ]);
    expect(r.shown).toEqual(['mcp__github__get_issue', 'mcp__github__close_issue']);
    expect(r.audited).toEqual([
      'mcp:github:get_issue allow',
      'mcp:github:delete_repository deny',
      'mcp:github:close_issue allow',
    ]);
  });

  it('telemetry: the run is a span tree with the tool call’s decision', async () => {
    const r = await telemetry.main();
    expect(r.spans).toEqual(
      expect.arrayContaining([
        'create_agent reader',
        'invoke_agent reader',
        'interlock.turn',
        'chat scripted',
      ]),
    );
    expect(r.spans).toContain('execute_tool mcp__notes__list_notes');
    expect(r.decision).toBe('allow');
  });
});

describe('observability guide snippets', () => {
  it('native-tool-events: each native call is reported and counted, a refusal as denied', async () => {
    const r = await nativeToolEvents.main();
    expect(r.log).toEqual([
      'word_count completed (1 chars)',
      'word_count failed: INVALID_TOOL_INPUT',
      'wipe denied: CAPABILITY_DENIED',
    ]);
    expect(r.wordCount).toMatchObject({ calls: 2, errors: 1, denied: 0, callsInFlight: 0 });
    expect(r.wordCount?.latencyMs.p50).toBeGreaterThanOrEqual(0);
    expect(r.wipe).toEqual({
      calls: 0,
      errors: 0,
      denied: 1,
      callsInFlight: 0,
      latencyMs: { p50: undefined, p95: undefined },
    });
  });
});

describe('examples/agent.ts', () => {
  it('runs the scripted plan over both example servers and prints the audit trail', async () => {
    const lines: string[] = [];
    const { result, audit } = await runAgentExample({
      write: (l) => lines.push(l),
      model: scriptedModel(scriptedPlan), // whatever OPENAI_* / ANTHROPIC_* the test runner has
    });
    expect(result.steps.map((s) => s.decision)).toEqual(['allow', 'allow', 'allow', 'deny', 'deny', 'allow']);
    expect(result.output).toBe('Saved drafts/lisbon. 6 tool calls, 2 refused by policy.');
    expect(audit).toHaveLength(6);
    expect(lines.join('\n')).toContain('audit trail');
  });

  it('runs as a program with the scripted model when no provider is configured', () => {
    const env = { ...process.env };
    for (const key of ['OPENAI_BASE_URL', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY']) delete env[key];
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'examples/agent.ts'], {
      cwd: ROOT,
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('model: scripted (scripted)');
    expect(run.stdout).toContain('deny    mcp__notes__delete_note');
    expect(run.stdout).toContain('answer (completed, 5 turns)');
  });
});
