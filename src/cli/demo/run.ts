/**
 * `interlock demo`: the bundled example servers (notes over stdio, weather over Streamable HTTP on a loopback
 * port), the sample policy, a scripted agent's calls through the gate, and the audit trail. No keys, no
 * network, no project file; every process it starts is gone when it returns, also after Ctrl-C.
 */
import { Engine } from '../../engine/engine.js';
import { type ScriptedProvider, scriptedModel, useTool } from '../../providers/scripted.js';
import { MemoryAuditSink } from '../../security/audit.js';
import { CapabilitySet } from '../../security/capability-set.js';
import { resourceFor } from '../../security/pattern.js';
import type { AuditRecord } from '../../security/types.js';
import { defaultDenyReason } from '../advice.js';
import { InterruptedError } from '../exit.js';
import { formatMs, renderTable } from '../format.js';
import { closeWithin, interruptible } from '../interrupt.js';
import { type Printer, visible } from '../io.js';
import { VerdictExplainer } from '../verdict.js';
import { DEMO_POLICY } from './policy.js';
import { DEMO_SCRIPT } from './script.js';
import { exampleServer, type RunningServer, startWeatherServer } from './servers.js';

/** The agent name the demo's calls are made for. */
export const DEMO_AGENT = 'demo-agent';

/** What one scripted call came to. */
export interface DemoStep {
  title: string;
  call: string;
  arguments: Record<string, unknown>;
  allowed: boolean;
  /** The deciding rule, when one decided. */
  rule: string | null;
  /** The result text when allowed, the denial's reason when not. */
  output: string;
  /** For a denial no rule decided: the rule that allows the tool for other arguments, if one does. */
  hint?: string | undefined;
}

/** Everything the demo did. */
export interface DemoResult {
  servers: { name: string; transport: string; state: string; tools: string[]; connectMs: number | null }[];
  steps: DemoStep[];
  audit: readonly AuditRecord[];
}

/** The scripted model: one turn per script entry (its title as the model's text, its call), then a final answer. */
export function demoModel(): ScriptedProvider {
  return scriptedModel([
    ...DEMO_SCRIPT.map((turn) => useTool(turn.call.name, turn.call.arguments, turn.title)),
    {
      text: 'Done: every call above went through the capability gate, and each decision is in the audit trail.',
    },
  ]);
}

/**
 * Runs the demo: an agent over the two servers with the sample policy and the scripted model; the agent
 * loop makes each call through the gate. Ctrl-C (`signal`) closes everything and rejects with
 * `InterruptedError`.
 */
export async function runDemo(options: { signal?: AbortSignal | undefined } = {}): Promise<DemoResult> {
  if (options.signal?.aborted === true) throw new InterruptedError();
  const audit = new MemoryAuditSink();
  const capabilities = CapabilitySet.fromPolicy(DEMO_POLICY);
  const engine = new Engine({ audit });
  let starting: Promise<RunningServer> | undefined;
  const cleanup = async () => {
    const weather = await starting?.catch(() => undefined);
    await Promise.allSettled([engine.close(), weather?.close()]);
  };
  try {
    return await interruptible(
      options.signal,
      (async () => {
        const notes = exampleServer('notes-server.mjs');
        starting = startWeatherServer();
        const weather = await starting;
        const agent = await engine.createAgent({
          name: DEMO_AGENT,
          mcpServers: [
            { name: 'notes', transport: 'stdio', command: process.execPath, args: [notes] },
            { name: 'weather', transport: 'http', url: weather.url },
          ],
          capabilities,
          model: demoModel(),
          instructions: 'Show what the capability gate does with each call.',
          maxTurns: DEMO_SCRIPT.length + 1,
          maxParallelToolCalls: 1,
        });
        const manager = agent.mcp;
        const servers = manager.connections.map((c) => ({
          name: c.name,
          transport: c.transport,
          state: c.state,
          tools: manager.tools.filter((t) => t.server === c.name).map((t) => t.tool),
          connectMs: c.connectDurationMs === undefined ? null : Math.round(c.connectDurationMs),
        }));
        const failed = manager.connections.find((c) => c.state !== 'ready');
        if (failed?.error !== undefined) throw failed.error;

        const run = await agent.run('Walk through the demo.', { signal: options.signal });
        const explainer = new VerdictExplainer(capabilities);
        // One decision per call, in order: the audit trail names the rule that allowed each allowed call.
        const records = audit.records;
        const steps: DemoStep[] = run.steps.map((step, i) => {
          const base = {
            title: DEMO_SCRIPT[i]?.title ?? step.tool,
            call: step.tool,
            arguments: { ...step.arguments },
          };
          if (step.decision === 'allow') {
            return { ...base, allowed: true, rule: records[i]?.ruleId ?? null, output: step.output };
          }
          const wrapper = manager.getTool(step.tool);
          const resource = wrapper === undefined ? undefined : resourceFor.tool(wrapper.server, wrapper.tool);
          const undecided = step.ruleId === undefined && resource !== undefined;
          const hint = undecided
            ? explainer.conditionHint(resource, 'execute', { agent: DEMO_AGENT })
            : undefined;
          // The model read the library's reason; people read it without the grant(...) a program would call.
          const plain = undecided && !explainer.ruleCovers(resource, 'execute');
          return {
            ...base,
            allowed: false,
            rule: step.ruleId ?? null,
            output: plain ? defaultDenyReason(resource, 'execute') : (step.reason ?? step.output),
            hint,
          };
        });
        return { servers, steps, audit: records };
      })(),
      // The `finally` below closes everything, bounded in time after Ctrl-C.
      async () => {},
    );
  } finally {
    await closeWithin(options.signal, cleanup());
  }
}

/** Prints a demo result for people. */
export function printDemo(printer: Printer, result: DemoResult): void {
  const p = printer;
  p.line(
    p.style(
      'bold',
      'Interlock demo: an agent with a scripted model, two MCP servers, one policy; every call is checked before it is sent.',
    ),
  );
  p.line();
  p.line(p.style('bold', 'Servers (connected in parallel)'));
  for (const s of result.servers) {
    const mark = s.state === 'ready' ? p.style('green', '✔') : p.style('red', '✖');
    p.line(
      `  ${mark} ${s.name.padEnd(8)} ${s.transport.padEnd(5)} ${formatMs(s.connectMs ?? undefined).padStart(7)}  tools: ${s.tools.join(', ')}`,
    );
  }
  p.line();
  p.line(p.style('bold', 'Policy'));
  for (const rule of DEMO_POLICY.rules) {
    const effect = p.style(rule.effect === 'deny' ? 'red' : 'green', rule.effect.padEnd(5));
    const when = rule.when === undefined ? '' : p.style('dim', `  when ${JSON.stringify(rule.when)}`);
    p.line(`  ${effect} ${rule.resource.padEnd(26)} ${(rule.id ?? '').padEnd(18)}${when}`.trimEnd());
  }
  p.line(`  ${p.style('dim', 'anything else: denied (default deny)')}`);
  result.steps.forEach((step, i) => {
    p.line();
    p.line(p.style('bold', `${i + 1}. ${step.title}`));
    p.line(`   ${p.style('cyan', '>')} ${step.call} ${JSON.stringify(step.arguments)}`);
    if (step.allowed) {
      p.line(`   ${p.style('green', 'allowed')}${step.rule === null ? '' : ` by rule '${step.rule}'`}`);
      for (const line of visible(step.output).split('\n')) p.line(`   ${p.style('dim', '|')} ${line}`);
    } else {
      p.line(`   ${p.style('red', 'denied')}  ${step.output}`);
      // The reason of a condition that failed already names the rule and its condition: said once (issue 39).
      const said = step.output.includes(' only when ');
      if (step.hint !== undefined && !said) p.line(`   ${p.style('dim', `(${step.hint})`)}`);
    }
  });
  p.line();
  p.line(p.style('bold', 'Audit trail (argument names only, never their values)'));
  const rows = result.audit.map((r) => [
    r.time.slice(11, 23),
    r.agent ?? '-',
    { text: r.effect, style: r.allowed ? ('green' as const) : ('red' as const) },
    r.resource,
    r.ruleId ?? '-',
    r.argumentKeys.join(','),
  ]);
  p.line(
    renderTable(p, ['TIME', 'AGENT', 'EFFECT', 'RESOURCE', 'RULE', 'ARGS'], rows)
      .split('\n')
      .map((l) => `  ${l}`)
      .join('\n'),
  );
}
