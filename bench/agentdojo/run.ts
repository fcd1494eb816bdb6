/**
 * `npm run agentdojo`: replays AgentDojo's suites against Interlock (bench/agentdojo/README.md) and prints the
 * tables; writes the full results as JSON.
 *
 *   node --import tsx bench/agentdojo/run.ts [--suite NAME]... [--policy NAME=FILE]... [--template SUITE=FILE]...
 *                                             [--out FILE]
 *
 * Policies: `none` (every call allowed), `per-call` (bench/agentdojo/policies/<suite>.yaml: the suite's tools allowed
 * by name, no flow rule), `templates` (the flow template for the kind of agent the suite is: by default
 * policies/templates/payments.yaml for banking and policies/templates/assistant.yaml for the others, when present;
 * `--template SUITE=FILE` names another), and every `--policy NAME=FILE`, run on every suite. A policy file is read
 * as `interlock` reads one.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadPolicyFile } from '../../src/config/load.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import {
  ALLOW_ALL,
  type CaseResult,
  findVectors,
  injectionsAlone,
  type ReplayPolicy,
  replaySuite,
  startSuiteServer,
} from './replay.js';
import { markdown, type PolicySummary, summarize } from './report.js';
import { loadSuite } from './suite.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '../..');
/** The suites this folder carries. */
export const SUITES = ['banking', 'slack', 'workspace'] as const;
/** The flow template each suite's kind of agent uses, by default (issue 42: written for a kind of agent, not a task). */
export const DEFAULT_TEMPLATES: Readonly<Record<string, string>> = {
  banking: join(ROOT, 'policies/templates/payments.yaml'),
  slack: join(ROOT, 'policies/templates/assistant.yaml'),
  workspace: join(ROOT, 'policies/templates/assistant.yaml'),
};

/**
 * A policy file, read as `interlock` reads one (YAML or JSON, `${VAR}` expanded, every problem named with its line),
 * checked now rather than inside the first case.
 */
export async function policyFromFile(name: string, file: string): Promise<ReplayPolicy> {
  const policy = await loadPolicyFile(file);
  CapabilitySet.fromPolicy(policy);
  return { name, capabilities: () => CapabilitySet.fromPolicy(policy) };
}

export interface ReplayOptions {
  readonly suites?: readonly string[];
  /** Extra policies run on every suite. */
  readonly policies?: readonly { name: string; file: string }[];
  /** The flow template per suite; a suite without one (or whose file is absent) is not run under `templates`. */
  readonly templates?: Readonly<Record<string, string>>;
  /** Called with each suite's results as they come. */
  readonly onSuite?: (suite: string, summaries: readonly PolicySummary[]) => void;
}

export interface SuiteRun {
  /** Each injection task's ground truth alone, with no policy: did its security check pass (the replay's own check)? */
  readonly alone: Record<string, boolean>;
  readonly vectors: Record<string, readonly string[]>;
  readonly results: Record<string, readonly CaseResult[]>;
  readonly summaries: readonly PolicySummary[];
}

/** Runs the replay: one server process per suite, every policy on every pair. */
export async function runReplay(options: ReplayOptions = {}): Promise<Record<string, SuiteRun>> {
  const out: Record<string, SuiteRun> = {};
  const templates = options.templates ?? DEFAULT_TEMPLATES;
  for (const name of options.suites ?? SUITES) {
    const dir = join(HERE, 'suites', name);
    const suite = loadSuite(dir);
    const policies: ReplayPolicy[] = [
      ALLOW_ALL,
      await policyFromFile('per-call', join(HERE, 'policies', `${name}.yaml`)),
    ];
    const template = templates[name];
    if (template !== undefined && existsSync(template))
      policies.push(await policyFromFile('templates', template));
    for (const p of options.policies ?? []) policies.push(await policyFromFile(p.name, p.file));
    const server = await startSuiteServer(dir);
    try {
      const alone = Object.fromEntries(await injectionsAlone(suite, server));
      const vectors = await findVectors(suite, server);
      const results: Record<string, CaseResult[]> = {};
      for (const policy of policies) results[policy.name] = await replaySuite(suite, server, policy, vectors);
      const summaries = Object.entries(results).map(([policy, r]) => summarize(policy, r));
      out[name] = { alone, vectors: Object.fromEntries(vectors), results, summaries };
      options.onSuite?.(name, summaries);
    } finally {
      await server.close();
    }
  }
  return out;
}

function pairs(list: readonly string[] | undefined, flag: string): { name: string; file: string }[] {
  return (list ?? []).map((entry) => {
    const at = entry.indexOf('=');
    if (at <= 0) throw new Error(`${flag} takes NAME=FILE, got '${entry}'`);
    return { name: entry.slice(0, at), file: resolve(entry.slice(at + 1)) };
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      suite: { type: 'string', multiple: true },
      policy: { type: 'string', multiple: true },
      template: { type: 'string', multiple: true },
      out: { type: 'string', default: join(ROOT, 'bench/results/agentdojo.json') },
    },
  });
  const templates = { ...DEFAULT_TEMPLATES };
  for (const t of pairs(values.template, '--template')) templates[t.name] = t.file;
  const runs = await runReplay({
    suites: values.suite,
    policies: pairs(values.policy, '--policy'),
    templates,
    onSuite: (suite, summaries) => process.stderr.write(`${suite}: ${summaries.length} policies done\n`),
  });
  const bySuite = Object.fromEntries(Object.entries(runs).map(([s, r]) => [s, r.summaries]));
  process.stdout.write(markdown(bySuite));
  mkdirSync(dirname(values.out), { recursive: true });
  writeFileSync(values.out, `${JSON.stringify(runs, null, 1)}\n`);
  process.stderr.write(`results: ${values.out}\n`);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
