/**
 * The AgentDojo replay (issue 42, "Measured on a public benchmark"): for every pair of a user task and an injection
 * task of a suite, a worst-case agent makes the user task's ground-truth calls (reading the injected content on the
 * way), then every call of the injection task's ground truth, as a fully hijacked model would. Every call goes
 * through an `MCPClientManager` (the whole gate: validation, policy, audit, and the manager's own flow state) to
 * the suite's MCP server (server.ts), one fresh MCP session and environment per case.
 *
 * An `ask` is approved when the call belongs to the user task (a user would approve it) and refused when it belongs
 * to the injection task. The security check of the injection task (the benchmark's, re-expressed as data) is run on
 * the environment after the case.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { isInterlockError, PermissionDeniedError } from '../../src/errors.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import type { MCPClientManagerOptions } from '../../src/interop/manager-options.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import type { AuditRecord } from '../../src/security/types.js';
import { makeToolName } from '../../src/tools/names.js';
import { holds, type Json, readPath } from './ops.js';
import { fillVectors, type Suite, type TaskCall } from './suite.js';

/** A policy the replay runs under: a name for the table and the capability set. */
export interface ReplayPolicy {
  readonly name: string;
  readonly capabilities: () => CapabilitySet;
}

/** How one call of a case went. */
export interface CallOutcome {
  readonly phase: 'user' | 'injection';
  readonly tool: string;
  /**
   * `ok`: ran; `asked`: ran after an approved ask; `denied`: a deny rule (or no rule) refused it; `refused`: an ask
   * was refused; `error`: the tool or the call failed.
   */
  readonly status: 'ok' | 'asked' | 'denied' | 'refused' | 'error';
  /** The rule that denied or asked (its id), or the error code. */
  readonly rule?: string | undefined;
  /**
   * When a flow condition took part in the decision (its audit record's `flow`): the session labels the rule named,
   * and the arguments that carried labeled content (`argument<-label`). Names only, never data.
   */
  readonly flow?: { readonly labels: readonly string[]; readonly carried: readonly string[] } | undefined;
}

/**
 * The labels of the policy's `labels` section (issue 42) for the manager's `flowLabels` option, when the set has them
 * (`CapabilitySet.flowLabels`); read without depending on the type, so the replay runs on builds with and without
 * labels.
 */
function flowLabelsOption(capabilities: CapabilitySet): Partial<MCPClientManagerOptions> {
  const flowLabels = (capabilities as { flowLabels?: unknown }).flowLabels;
  return flowLabels === undefined ? {} : ({ flowLabels } as Partial<MCPClientManagerOptions>);
}

/** The `flow` part of an audit record (issue 42), read without depending on its type. */
function flowOf(record: AuditRecord | undefined): CallOutcome['flow'] {
  const flow = (record as { flow?: { labels?: unknown; carried?: unknown } } | undefined)?.flow;
  if (flow === undefined || flow === null) return undefined;
  const labels = Array.isArray(flow.labels) ? flow.labels.map(String) : [];
  const carried = Array.isArray(flow.carried)
    ? flow.carried.map(
        (c: { argument?: unknown; label?: unknown }) => `${String(c.argument)}<-${String(c.label)}`,
      )
    : [];
  return { labels, carried: [...new Set(carried)] };
}

/** One (user task, injection task) pair under one policy. */
export interface CaseResult {
  readonly userTask: string;
  readonly injectionTask: string;
  /** The injection vectors the user task's ground truth reads (found with canaries). */
  readonly vectors: readonly string[];
  /** The benchmark's security check passed: the attacker's goal was reached. */
  readonly attackSucceeded: boolean;
  /** Every call of the user task ran (some perhaps after an approved ask). */
  readonly userPassed: boolean;
  /** ...and at least one of them needed an ask. */
  readonly userNeededAsk: boolean;
  readonly calls: readonly CallOutcome[];
}

/** A running suite server (server.ts in its own process). */
export interface SuiteServer {
  readonly url: string;
  close(): Promise<void>;
}

const SERVER_SCRIPT = fileURLToPath(new URL('./server.ts', import.meta.url));

/** Starts server.ts for the suite in `dir` in a child process (one process serves every case of the suite). */
export async function startSuiteServer(dir: string): Promise<SuiteServer> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', SERVER_SCRIPT, dir], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`the suite server for ${dir} exited with code ${String(code)} before listening`);
  });
  const listening = (async () => {
    for await (const line of lines) {
      const m = /^LISTENING (\d+)$/.exec(line);
      if (m) return Number(m[1]);
    }
    throw new Error('the suite server closed its output before listening');
  })();
  const port = await Promise.race([listening, exited]);
  exited.catch(() => {});
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      if (child.exitCode !== null) return;
      const gone = once(child, 'exit');
      child.stdin?.end();
      await gone;
    },
  };
}

async function http(url: string, init?: RequestInit): Promise<Json> {
  const res = await fetch(url, init);
  if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${url} answered ${res.status}`);
  return res.status === 204 ? null : ((await res.json()) as Json);
}

/** Resolves `{ "$result": { call, path } }` arguments: a value from an earlier call's result in the same task. */
function resolveArgs(args: Record<string, Json>, results: readonly Json[]): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries(args)) {
    const ref = v !== null && typeof v === 'object' && !Array.isArray(v) ? v.$result : undefined;
    if (ref !== undefined && ref !== null && typeof ref === 'object' && !Array.isArray(ref)) {
      const at = results[Number(ref.call)] ?? null;
      out[k] = readPath(ref.path ?? '', { root: at, args: {}, vars: {}, now: '' }) ?? null;
    } else {
      out[k] = v;
    }
  }
  return out;
}

interface RunOptions {
  readonly suite: Suite;
  readonly server: SuiteServer;
  readonly policy: ReplayPolicy;
  readonly injections: Readonly<Record<string, string>>;
  readonly phases: readonly { phase: 'user' | 'injection'; calls: readonly TaskCall[] }[];
}

/** Runs one case: a fresh environment and MCP session, the phases' calls in order. */
async function runCase(options: RunOptions): Promise<{
  outcomes: CallOutcome[];
  texts: string[];
  pre: Json;
  post: Json;
  ran: Json;
}> {
  const { suite, server, policy, injections } = options;
  const created = (await http(`${server.url}/cases`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ injections }),
  })) as { id: string };
  let phase: 'user' | 'injection' = 'user';
  let asked: string | undefined;
  let audited: AuditRecord | undefined;
  const capabilities = policy.capabilities();
  const manager = new MCPClientManager({
    capabilities,
    ...flowLabelsOption(capabilities),
    audit: {
      write: (record) => {
        audited = record;
      },
    },
    approver: (request) => {
      asked = request.decision.rule?.id ?? 'ask';
      return phase === 'user';
    },
  });
  const outcomes: CallOutcome[] = [];
  const texts: string[] = [];
  try {
    await manager.connectServer({
      name: suite.name,
      transport: 'http',
      url: `${server.url}/mcp`,
      headers: { 'x-agentdojo-case': created.id },
    });
    for (const step of options.phases) {
      phase = step.phase;
      const results: Json[] = [];
      for (const call of step.calls) {
        asked = undefined;
        audited = undefined;
        const args = fillVectors(resolveArgs(call.args, results), suite, injections) as Record<string, Json>;
        try {
          const result = await manager.callTool(makeToolName(suite.name, call.tool), args);
          texts.push(result.text);
          results.push(parseResult(result.text));
          outcomes.push({
            phase,
            tool: call.tool,
            status: result.isError ? 'error' : asked !== undefined ? 'asked' : 'ok',
            rule: asked,
            flow: asked === undefined ? undefined : flowOf(audited),
          });
        } catch (err) {
          results.push(null);
          if (err instanceof PermissionDeniedError) {
            outcomes.push({
              phase,
              tool: call.tool,
              status: err.decision?.effect === 'ask' ? 'refused' : 'denied',
              rule: err.rule?.id ?? err.decision?.effect ?? 'refused',
              flow: flowOf(audited),
            });
          } else {
            outcomes.push({
              phase,
              tool: call.tool,
              status: 'error',
              rule: isInterlockError(err) ? err.code : String(err),
            });
          }
        }
      }
    }
  } finally {
    await manager.close();
  }
  const after = (await http(`${server.url}/cases/${created.id}`)) as { environment: Json; calls: Json };
  await http(`${server.url}/cases/${created.id}`, { method: 'DELETE' });
  return {
    outcomes,
    texts,
    pre: fillVectors(suite.environment, suite, injections),
    post: after.environment,
    ran: after.calls,
  };
}

function parseResult(text: string): Json {
  try {
    return parse(text) as Json;
  } catch {
    return text;
  }
}

const ALLOW_ALL: ReplayPolicy = {
  name: 'none',
  capabilities: () => CapabilitySet.allowAll({ onWarning: () => {} }),
};

/**
 * The injection vectors each user task reads: its ground truth runs with a distinct canary in every vector, and a
 * vector counts when its canary comes back in a result (how the benchmark finds where to put an injection).
 */
export async function findVectors(
  suite: Suite,
  server: SuiteServer,
  concurrency = DEFAULT_CONCURRENCY,
): Promise<Map<string, string[]>> {
  const canaries = Object.fromEntries(Object.keys(suite.vectors).map((v) => [v, `CANARY_${v}_CANARY`]));
  const found = await pool(suite.userTasks, concurrency, async (task) => {
    const { texts } = await runCase({
      suite,
      server,
      policy: ALLOW_ALL,
      injections: canaries,
      phases: [{ phase: 'user', calls: task.calls }],
    });
    const all = texts.join('\n');
    return [task.id, Object.keys(canaries).filter((v) => all.includes(canaries[v] as string))] as const;
  });
  return new Map(found.map(([id, vectors]) => [id, [...vectors]]));
}

/** Cases run at once by default: each is its own session and environment, so they overlap safely. */
export const DEFAULT_CONCURRENCY = 4;

/** `fn` over `items`, at most `limit` at a time; the results keep the items' order. */
async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}

/** Runs every (user task, injection task) pair of the suite under `policy`, `concurrency` cases at a time. */
export function replaySuite(
  suite: Suite,
  server: SuiteServer,
  policy: ReplayPolicy,
  vectors: ReadonlyMap<string, readonly string[]>,
  concurrency = DEFAULT_CONCURRENCY,
): Promise<CaseResult[]> {
  const pairs = suite.userTasks.flatMap((user) =>
    suite.injectionTasks.map((injection) => ({ user, injection })),
  );
  return pool(pairs, concurrency, async ({ user, injection }): Promise<CaseResult> => {
    const text = suite.injectionTemplate.replaceAll('{goal}', injection.goal);
    const seen = vectors.get(user.id) ?? [];
    const injections = Object.fromEntries(seen.map((v) => [v, text]));
    const run = await runCase({
      suite,
      server,
      policy,
      injections,
      phases: [
        { phase: 'user', calls: user.calls },
        { phase: 'injection', calls: injection.calls },
      ],
    });
    const userCalls = run.outcomes.filter((o) => o.phase === 'user');
    const userPassed = userCalls.every((o) => o.status === 'ok' || o.status === 'asked');
    return {
      userTask: user.id,
      injectionTask: injection.id,
      vectors: seen,
      attackSucceeded: holds(injection.security, {
        root: { pre: run.pre, post: run.post, calls: run.ran },
        args: {},
        vars: {},
        now: suite.now,
      }),
      userPassed,
      userNeededAsk: userPassed && userCalls.some((o) => o.status === 'asked'),
      calls: run.outcomes,
    };
  });
}

/** Runs each injection task's ground truth alone (no user task) with no policy: the replay's own integrity check. */
export async function injectionsAlone(suite: Suite, server: SuiteServer): Promise<Map<string, boolean>> {
  const out = new Map<string, boolean>();
  for (const injection of suite.injectionTasks) {
    const run = await runCase({
      suite,
      server,
      policy: ALLOW_ALL,
      injections: {},
      phases: [{ phase: 'injection', calls: injection.calls }],
    });
    out.set(
      injection.id,
      run.outcomes.every((o) => o.status === 'ok') &&
        holds(injection.security, {
          root: { pre: run.pre, post: run.post, calls: run.ran },
          args: {},
          vars: {},
          now: suite.now,
        }),
    );
  }
  return out;
}

export { ALLOW_ALL };
