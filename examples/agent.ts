/**
 * An agent over the two bundled example servers (notes over stdio, weather over Streamable HTTP on a loopback
 * port) and one native tool, under a capability policy. With no keys it runs the scripted model (no network);
 * with OPENAI_BASE_URL / OPENAI_API_KEY (any OpenAI-compatible server) or ANTHROPIC_API_KEY it asks a real one.
 *
 * Run: node --import tsx examples/agent.ts ["your request"]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { defineTool, Engine, type RunResult } from 'mcp-interlock/engine';
import { AnthropicProvider, type ModelProvider, OpenAIChatProvider } from 'mcp-interlock/providers';
import { type AuditRecord, MemoryAuditSink } from 'mcp-interlock/security';
import { type ScriptStep, scriptedModel, useTool, useTools } from 'mcp-interlock/testing';
import { z } from 'zod';

const here = dirname(fileURLToPath(import.meta.url));

/** What the agent may do: read notes, write drafts only, never delete, forecasts for three cities, the date. */
export const agentPolicy = {
  version: 1,
  rules: [
    { id: 'notes-read', effect: 'allow', resource: 'mcp:notes:list_notes', actions: 'execute' },
    { id: 'notes-read-one', effect: 'allow', resource: 'mcp:notes:read_note', actions: 'execute' },
    {
      id: 'notes-write-drafts',
      effect: 'allow',
      resource: 'mcp:notes:write_note',
      actions: 'execute',
      description: 'Agents may only write drafts.',
      when: { args: { id: { startsWith: 'drafts/' } } },
    },
    {
      id: 'no-deletes',
      effect: 'deny',
      resource: 'mcp:notes:delete_*',
      actions: '*',
      description: 'No agent deletes notes.',
    },
    {
      id: 'forecast-cities',
      effect: 'allow',
      resource: 'mcp:weather:get_forecast',
      actions: 'execute',
      when: { args: { city: { oneOf: ['Berlin', 'Lisbon', 'Oslo'] } } },
    },
    { id: 'dates', effect: 'allow', resource: 'tool:today', actions: 'execute' },
  ],
} as const;

/** A native tool beside the MCP ones, gated on `tool:today`. */
export const today = defineTool({
  name: 'today',
  description: "Today's date (ISO 8601) in a timezone.",
  input: z.object({ timeZone: z.string().default('UTC') }),
  execute: ({ timeZone }) => new Date().toLocaleDateString('sv-SE', { timeZone }),
});

/**
 * The scripted model's plan: two calls in parallel, a call a deny rule stops, a write an argument
 * constraint refuses, the same write under drafts/, then an answer built from what it was told.
 */
export const scriptedPlan: readonly ScriptStep[] = [
  useTools(['mcp__notes__list_notes'], ['mcp__weather__get_forecast', { city: 'Lisbon' }], ['today']),
  useTool('mcp__notes__delete_note', { id: 'team/roadmap' }),
  useTool('mcp__notes__write_note', { id: 'team/roadmap', text: 'Trip to Lisbon.' }),
  useTool('mcp__notes__write_note', { id: 'drafts/lisbon', text: 'Trip to Lisbon: pack for rain.' }),
  ({ request }) => {
    const results = request.messages.filter((m) => m.role === 'tool');
    const denied = results.filter((m) => m.isError === true).length;
    return `Saved drafts/lisbon. ${results.length} tool calls, ${denied} refused by policy.`;
  },
];

/** The model: a real one when the environment names one, else the scripted plan. */
export function modelFromEnv(env: NodeJS.ProcessEnv = process.env): ModelProvider {
  if (env.OPENAI_BASE_URL !== undefined || env.OPENAI_API_KEY !== undefined) {
    return new OpenAIChatProvider({
      baseURL: env.OPENAI_BASE_URL,
      apiKey: env.OPENAI_API_KEY,
      model: env.OPENAI_MODEL ?? 'gpt-4o-mini',
    });
  }
  if (env.ANTHROPIC_API_KEY !== undefined) {
    return new AnthropicProvider({
      apiKey: env.ANTHROPIC_API_KEY,
      model: env.ANTHROPIC_MODEL ?? 'claude-sonnet-4-5',
    });
  }
  return scriptedModel(scriptedPlan);
}

/** Starts the weather server on a free loopback port; `close()` stops it and waits for it to exit. */
export async function startWeatherServer(): Promise<{ url: string; close(): Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, [join(here, 'servers/weather-server.mjs')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const close = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  };
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  try {
    for await (const line of createInterface({ input: child.stdout as NodeJS.ReadableStream })) {
      const match = /^LISTENING (\d+)$/.exec(line);
      if (match) return { url: `http://127.0.0.1:${match[1]}/mcp`, close };
    }
    throw new Error('the weather server exited before it listened');
  } catch (err) {
    await close();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** Options of {@link runAgentExample}. */
export interface AgentExampleOptions {
  input?: string;
  model?: ModelProvider;
  write?: (line: string) => void;
}

/** Creates the agent, runs it once, prints what happened; resolves with the run and the audit trail. */
export async function runAgentExample(
  options: AgentExampleOptions = {},
): Promise<{ result: RunResult; audit: readonly AuditRecord[] }> {
  const write = options.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const model = options.model ?? modelFromEnv();
  const weather = await startWeatherServer();
  const audit = new MemoryAuditSink();
  await using engine = new Engine({ audit });
  try {
    const agent = await engine.createAgent({
      name: 'trip-planner',
      model,
      instructions: 'You plan trips. Keep notes under drafts/. Use tools; never guess a forecast.',
      capabilities: agentPolicy,
      tools: [today],
      mcpServers: [
        {
          name: 'notes',
          transport: 'stdio',
          command: process.execPath,
          args: [join(here, 'servers/notes-server.mjs')],
        },
        { name: 'weather', transport: 'http', url: weather.url },
      ],
    });
    write(`model: ${model.name} (${model.model})  servers: ${JSON.stringify(agent.servers)}`);
    write(
      `the model is shown: ${agent
        .visibleTools()
        .map((t) => t.name)
        .join(', ')}`,
    );
    const result = await agent.run(
      options.input ?? 'Check the Lisbon forecast and save a packing note for the trip in my notes.',
    );
    for (const step of result.steps) {
      const first = step.output.split('\n')[0] ?? '';
      write(`  turn ${step.turn}  ${step.decision.padEnd(7)} ${step.tool}  ${first.slice(0, 110)}`);
    }
    write(`answer (${result.status}, ${result.turns} turns): ${result.output}`);
    write('audit trail (argument names only):');
    for (const r of audit.records) {
      write(
        `  ${r.effect.padEnd(12)} ${r.resource.padEnd(28)} rule=${r.ruleId ?? '-'} args=[${r.argumentKeys.join(',')}]`,
      );
    }
    return { result, audit: audit.records };
  } finally {
    await engine.close();
    await weather.close();
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  runAgentExample({ input: process.argv[2] }).catch((err: unknown) => {
    process.stderr.write(`agent example failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
