/**
 * The demo: two bundled example servers (notes over stdio, weather over Streamable HTTP on a loopback port),
 * one capability policy, and what the gate does with allowed calls, denied calls, argument constraints and the
 * audit trail. No keys, no network. Run: `npm run demo`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { isInteropError } from '../src/errors.js';
import { MCPClientManager } from '../src/interop/index.js';
import { CapabilitySet, MemoryAuditSink } from '../src/security/index.js';

const here = dirname(fileURLToPath(import.meta.url));

/** The sample policy: reads allowed, writes only under drafts/, deletes denied, forecasts for three cities. */
export const demoPolicy = {
  version: 1,
  rules: [
    { id: 'notes-read', effect: 'allow', resource: 'mcp:notes:list_notes', actions: 'execute' },
    { id: 'notes-read-one', effect: 'allow', resource: 'mcp:notes:read_*', actions: 'execute' },
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
  ],
} as const;

/** Starts the weather server on a free loopback port and resolves once it listens. */
async function startWeatherServer(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(here, 'servers/weather-server.mjs')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  try {
    for await (const line of lines) {
      const match = /^LISTENING (\d+)$/.exec(line);
      if (match) return { url: `http://127.0.0.1:${match[1]}/mcp`, child };
    }
    throw new Error('the weather server exited before it listened');
  } finally {
    clearTimeout(timer);
  }
}

/** One line of what the demo did, for the test and for people. */
export interface DemoStep {
  call: string;
  allowed: boolean;
  output: string;
}

/** Runs the demo, writing to `write`; resolves with every step and the audit records. */
export async function runDemo(write: (line: string) => void = (l) => process.stdout.write(`${l}\n`)) {
  const weather = await startWeatherServer();
  const audit = new MemoryAuditSink();
  const manager = new MCPClientManager({
    capabilities: CapabilitySet.fromPolicy(demoPolicy),
    audit,
    agent: 'demo-agent',
  });
  const steps: DemoStep[] = [];
  try {
    write('Connecting two servers in parallel...');
    const started = performance.now();
    const connected = await manager.connectAll([
      {
        name: 'notes',
        transport: 'stdio',
        command: process.execPath,
        args: [join(here, 'servers/notes-server.mjs')],
      },
      { name: 'weather', transport: 'http', url: weather.url },
    ]);
    write(`  connected ${JSON.stringify(connected)} in ${Math.round(performance.now() - started)} ms`);
    for (const connection of manager.connections) {
      const tools = manager.tools.filter((t) => t.server === connection.name).map((t) => t.tool);
      write(
        `  ${connection.name.padEnd(8)} ${connection.transport.padEnd(6)} ${connection.state}  tools: ${tools.join(', ')}`,
      );
    }

    const attempts: [string, Record<string, unknown>, string][] = [
      ['mcp__notes__list_notes', {}, 'an allowed call'],
      ['mcp__weather__get_forecast', { city: 'Lisbon' }, 'an allowed call over Streamable HTTP'],
      ['mcp__notes__delete_note', { id: 'team/roadmap' }, 'a call an explicit deny rule stops'],
      [
        'mcp__notes__write_note',
        { id: 'team/roadmap', text: 'rewritten' },
        'an argument constraint: not a draft',
      ],
      [
        'mcp__notes__write_note',
        { id: 'drafts/idea', text: 'gate every call' },
        'the same tool, allowed argument',
      ],
      ['mcp__weather__get_forecast', { city: 'Atlantis' }, 'a city outside the allowed list'],
      ['mcp__weather__set_alert', { phone: '+100', city: 'Oslo' }, 'a tool no rule grants (default deny)'],
    ];
    for (const [name, args, what] of attempts) {
      write('');
      write(`> ${name} ${JSON.stringify(args)}  (${what})`);
      try {
        const output = await manager.executeTool(name, args);
        steps.push({ call: name, allowed: true, output });
        write(`  allowed: ${output.split('\n').join('\n           ')}`);
      } catch (err) {
        if (!isInteropError(err, 'CAPABILITY_DENIED')) throw err;
        steps.push({ call: name, allowed: false, output: err.message });
        write(`  DENIED: ${err.message}`);
      }
    }

    write('');
    write('Audit trail (argument names only, never values):');
    for (const r of audit.records) {
      write(
        `  ${r.time}  ${r.agent ?? '-'}  ${r.effect.padEnd(12)} ${r.resource.padEnd(28)} rule=${r.ruleId ?? '-'}  args=[${r.argumentKeys.join(',')}]`,
      );
    }
    return { steps, audit: audit.records };
  } finally {
    await manager.close();
    weather.child.kill('SIGTERM');
    if (weather.child.exitCode === null && weather.child.signalCode === null)
      await once(weather.child, 'exit');
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  runDemo().catch((err: unknown) => {
    process.stderr.write(`demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
