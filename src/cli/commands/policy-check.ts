/**
 * `interlock policy check [--offline] [--at TIME] [--strict]`: for each principal (the gateway's `principals`
 * bindings, else the project's agent), the tools, resources, prompts and server requests no request could ever
 * allow under the project file's policy, and the rules that can never match (expired, shadowed by an unconditional
 * deny, or an `mcp:` pattern naming no tool or server request of the project's servers). The analysis is
 * `src/security/reachability.ts`, on `CapabilitySet.couldAllow`: the function the gateway lists tools with.
 *
 * Tools come from the connected servers; a server that does not connect, and every server with `--offline`, is
 * known by its pins (the pin file's definitions). A server known neither way is reported unknown, and no pattern
 * naming it is called dead.
 */

import { isAbsolute, relative } from 'node:path';
import type { InterlockConfig } from '../../config/load.js';
import { CapabilitySet } from '../../security/capability-set.js';
import { display } from '../../security/pattern.js';
import { PinStore } from '../../security/pinning.js';
import { POLICY_VERSION } from '../../security/policy.js';
import {
  type NeverAllowed,
  neverAllowed,
  type ReachTarget,
  type RuleFinding,
  ruleFindings,
  type ServerCatalog,
  serverTargets,
} from '../../security/reachability.js';
import type { RuleInfo } from '../../security/rules.js';
import type { CheckContext } from '../../security/types.js';
import { ExitCode, UsageError } from '../exit.js';
import { type CommandContext, Project } from '../project.js';
import { GATEWAY_AGENT, loadProjectConfig } from './policy-test.js';

export interface PolicyCheckOptions {
  /** Connect nothing; tools come from the pin file. */
  offline?: boolean | undefined;
  /** `--at`: the time to decide at (ISO 8601). @default now */
  at?: string | undefined;
  /** Exit 4 when a rule can never match. */
  strict?: boolean | undefined;
}

/** Where a server's catalog came from. */
type Source = 'connected' | 'pins' | 'unknown';

interface Known {
  catalogs: Map<string, ServerCatalog & { source: Source }>;
}

export async function policyCheckCommand(ctx: CommandContext, options: PolicyCheckOptions): Promise<number> {
  const at = options.at === undefined ? Date.now() : Date.parse(options.at);
  if (Number.isNaN(at) || (options.at !== undefined && !/^\d{4}-\d\d-\d\dT/.test(options.at))) {
    throw new UsageError(
      `--at '${display(options.at)}' is not an ISO 8601 time; write e.g. --at 2026-01-01T00:00:00Z.`,
    );
  }
  let config: InterlockConfig;
  let known: Known;
  if (options.offline === true) {
    config = await loadProjectConfig(ctx);
    known = fromPins(config, await PinStore.load(config.pinsFile), new Set());
  } else {
    const project = await Project.open(ctx);
    try {
      config = project.config;
      await project.connect();
      // The tools the manager exposes (a server's `tools` filter applied), as the gateway lists them; the rest raw.
      const exposed = project.manager.tools;
      const connected = new Map<string, ServerCatalog>();
      for (const c of project.manager.connections) {
        if (c.state !== 'ready') continue;
        const tools = exposed
          .filter((w) => w.server === c.name && !w.offline)
          .map((w) => ({ name: w.tool, annotations: w.annotations }));
        connected.set(c.name, { ...c, tools });
      }
      for (const [name, error] of project.failed) {
        ctx.printer.warn(
          `server '${name}' did not connect (${error?.message.split('\n')[0] ?? 'unknown error'}): its pinned tools are checked instead`,
        );
      }
      known = fromPins(config, project.pins, new Set(connected.keys()));
      for (const [name, c] of connected) known.catalogs.set(name, { ...c, source: 'connected' });
    } finally {
      await project.close();
    }
  }
  return report(ctx, config, known, at, options);
}

/** Every configured server's catalog from its pins, except the `skip` ones; servers without pins are unknown. */
function fromPins(config: InterlockConfig, pins: PinStore, skip: ReadonlySet<string>): Known {
  const catalogs = new Map<string, ServerCatalog & { source: Source }>();
  const entries = pins.entries();
  for (const server of config.servers) {
    if (skip.has(server.name)) continue;
    const pinned = entries.filter((e) => e.server === server.name);
    catalogs.set(
      server.name,
      pinned.length === 0
        ? { source: 'unknown' }
        : {
            source: 'pins',
            tools: pinned.map((e) => ({
              name: e.tool,
              annotations: pins.definition(e.server, e.tool)?.annotations,
            })),
          },
    );
  }
  return { catalogs };
}

interface PrincipalView {
  name: string;
  set: CapabilitySet;
  context: Omit<CheckContext, 'args' | 'annotations'>;
  /** The rules this principal's set adds (a binding's), and the rules it derives from. */
  own: readonly RuleInfo[] | undefined;
}

function report(
  ctx: CommandContext,
  config: InterlockConfig,
  known: Known,
  at: number,
  options: PolicyCheckOptions,
): number {
  const { printer } = ctx;
  const policy = config.policy ?? { version: POLICY_VERSION, rules: [] };
  const root = CapabilitySet.fromPolicy(policy, { clock: () => at, onWarning: () => {} });
  const bindings = config.gateway?.principals;
  // As the gateway does: each binding derives from the project's set; without bindings, the agent has the set.
  const principals: PrincipalView[] =
    bindings === undefined
      ? [{ name: `agent '${config.agent}'`, set: root, context: { agent: config.agent }, own: undefined }]
      : bindings.map((b, i) => {
          const set = root.derive(b.rules);
          return {
            name: `principals[${i}] ${JSON.stringify(b.match)}`,
            set,
            context: { agent: GATEWAY_AGENT },
            own: set.rules,
          };
        });
  const targets = [...known.catalogs].flatMap(([server, catalog]) => serverTargets(server, catalog));
  const toolsOf = new Map(
    [...known.catalogs].map(([server, c]) => [server, c.tools?.map((t) => t.name)] as const),
  );
  const findings: { scope: string; finding: RuleFinding }[] = [
    ...ruleFindings(root.rules, { servers: toolsOf }, at).map((finding) => ({ scope: 'policy', finding })),
    ...principals.flatMap((p) =>
      p.own === undefined
        ? []
        : ruleFindings(p.own, { servers: toolsOf }, at, root.rules).map((finding) => ({
            scope: p.name.split(' ')[0] ?? p.name,
            finding,
          })),
    ),
  ];
  const results = principals.map((p) => ({
    principal: p,
    never: neverAllowed(p.set, targets, p.context, [...root.rules, ...(p.own ?? [])]),
  }));
  const unknown = [...known.catalogs].filter(([, c]) => c.source === 'unknown').map(([s]) => s);
  const exitCode = options.strict === true && findings.length > 0 ? ExitCode.CHECK_FAILED : ExitCode.OK;

  for (const server of unknown) {
    printer.warn(
      `server '${server}': its tools are unknown (not connected and not pinned), so they were not checked`,
    );
  }
  if (printer.json) {
    printer.data({
      policyFile: config.policyFile ?? null,
      at: new Date(at).toISOString(),
      servers: Object.fromEntries([...known.catalogs].map(([s, c]) => [s, c.source])),
      principals: results.map(({ principal, never }) => ({
        principal: principal.name,
        neverAllowed: never.map(neverJson),
        couldBeAllowed: counts(targets.filter((t) => !never.some((n) => n.target === t))),
      })),
      rules: findings.map(({ scope, finding }) => findingJson(scope, finding)),
      unknownServers: unknown,
    });
    return exitCode;
  }

  const sources = [...known.catalogs].map(([s, c]) => `${s} (${c.source})`).join(', ');
  const file = relative(ctx.io.cwd, config.policyFile ?? config.file);
  printer.line(
    `policy of ${file.startsWith('..') || isAbsolute(file) ? (config.policyFile ?? config.file) : file}, decided at ${new Date(at).toISOString()}`,
  );
  printer.line(`servers: ${sources === '' ? 'none' : sources}`);
  for (const { principal, never } of results) {
    printer.line();
    printer.line(printer.style('bold', principal.name));
    if (never.length === 0) printer.line('  never allowed: none');
    else printer.line('  never allowed:');
    for (const n of never) {
      printer.line(
        `    ${n.target.kind.padEnd(17)} ${display(n.target.resource)} (${n.target.action})  ${neverText(n)}`,
      );
    }
    const could = counts(targets.filter((t) => !never.some((n) => n.target === t)));
    printer.line(
      `  could be allowed: ${Object.entries(could)
        .map(([k, v]) => `${v} ${k}`)
        .join(', ')}`,
    );
  }
  if (bindings !== undefined) printer.line('\ncallers that match no binding: nothing is allowed');
  printer.line();
  if (findings.length === 0) printer.line('rules that can never match: none');
  else printer.line('rules that can never match:');
  for (const { scope, finding } of findings) printer.line(`  ${findingText(scope, finding)}`);
  const neverTotal = results.reduce((n, r) => n + r.never.length, 0);
  printer.line(
    `${results.length} principal${results.length === 1 ? '' : 's'}: ${neverTotal} never allowed, ${findings.length} rule${findings.length === 1 ? '' : 's'} that can never match`,
  );
  return exitCode;
}

function counts(targets: readonly ReachTarget[]): Record<string, number> {
  const out: Record<string, number> = {
    tools: 0,
    resources: 0,
    'resource templates': 0,
    prompts: 0,
    'server requests': 0,
  };
  const key = {
    tool: 'tools',
    resource: 'resources',
    'resource-template': 'resource templates',
    prompt: 'prompts',
    'server-request': 'server requests',
  } as const;
  for (const t of targets) out[key[t.kind]] = (out[key[t.kind]] ?? 0) + 1;
  return out;
}

function neverText(n: NeverAllowed): string {
  const until = n.until === undefined ? '' : ` until ${new Date(n.until).toISOString()}`;
  return n.effect === 'deny' ? `denied by rule '${n.rule}'${until}` : 'no allow or ask rule could apply';
}

function neverJson(n: NeverAllowed) {
  return {
    kind: n.target.kind,
    server: n.target.server,
    name: n.target.name,
    resource: n.target.resource,
    action: n.target.action,
    effect: n.effect,
    rule: n.rule ?? null,
    until: n.until === undefined ? null : new Date(n.until).toISOString(),
  };
}

function ruleLabel(rule: RuleInfo): string {
  return `'${rule.id}' (${rule.effect} ${display(rule.pattern)} ${rule.actions.join(',')})`;
}

function findingText(scope: string, f: RuleFinding): string {
  const where = scope === 'policy' ? '' : `${scope}: `;
  switch (f.kind) {
    case 'expired':
      return `${where}${ruleLabel(f.rule)}  expired at ${new Date(f.rule.expiresAt ?? 0).toISOString()}`;
    case 'shadowed':
      return `${where}${ruleLabel(f.rule)}  shadowed: deny ${ruleLabel(f.by)} matches every request it does, and deny wins`;
    case 'dead':
      return `${where}${ruleLabel(f.rule)}  dead: matches no tool or server request of the project's servers`;
  }
}

function findingJson(scope: string, f: RuleFinding) {
  return {
    scope,
    rule: f.rule.id,
    effect: f.rule.effect,
    pattern: f.rule.pattern,
    finding: f.kind,
    by: f.kind === 'shadowed' ? f.by.id : null,
  };
}
