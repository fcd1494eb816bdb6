/**
 * What `resources` and `prompts` share (issue 39): the servers to connect, the policy's verdict on a resource
 * or prompt as a table cell and as data, and a denial turned into advice, as `tools` and `call` do for tools.
 */
import type { ServerConnectionInfo } from '../../interop/connection.js';
import type { Cell } from '../format.js';
import type { Project } from '../project.js';
import { VerdictExplainer } from '../verdict.js';

const VERDICT_STYLE = { allowed: 'green', denied: 'red', ask: 'yellow', conditional: 'cyan' } as const;

/** The policy's verdict on one resource or prompt, as `--json` shows it. */
export interface ExtraVerdict {
  verdict: 'allowed' | 'denied' | 'ask' | 'conditional';
  effect: string;
  rule: { id: string; pattern: string; effect: string; description?: string | undefined } | null;
  reason: string;
}

/** Explains verdicts on `mcp-resource:` / `mcp-prompt:` resources for one project. */
export class ExtraVerdicts {
  readonly #project: Project;
  readonly #explainer: VerdictExplainer;

  constructor(project: Project) {
    this.#project = project;
    this.#explainer = new VerdictExplainer(project.capabilities);
  }

  /** The verdict on `action` on `resource`, with the reason in CLI terms. */
  explain(resource: string, action: 'read' | 'get'): ExtraVerdict {
    const verdict = this.#explainer.explain(resource, action, { agent: this.#project.config.agent });
    const advice =
      verdict.verdict === 'allowed' ? undefined : this.#project.advisor.advise(verdict, resource, action);
    return {
      verdict: verdict.verdict,
      effect: verdict.effect,
      rule: verdict.rule ?? null,
      reason: advice?.reason ?? verdict.reason,
    };
  }
}

/** The VERDICT and RULE cells of a row. */
export function verdictCells(v: ExtraVerdict): Cell[] {
  return [
    { text: v.verdict, style: VERDICT_STYLE[v.verdict] },
    v.rule?.id ?? (v.effect === 'default-deny' ? '(default deny)' : '-'),
  ];
}

/** Connects `server` (or every server), warns about failures, and returns the ready connections in file order. */
export async function connectExtras(
  project: Project,
  server: string | undefined,
  warn: boolean,
): Promise<ServerConnectionInfo[]> {
  await project.connect(server === undefined ? undefined : [server]);
  if (warn) project.warnFailed();
  const order = project.config.servers.map((s) => s.name);
  return project.manager.connections
    .filter((c) => c.state === 'ready' && (server === undefined || c.name === server))
    .sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
}

/** The server outcomes, as `--json` lists them. */
export function serverStates(project: Project) {
  return [...project.outcomes].map(([name, o]) => ({
    name,
    state: o.state,
    error: o.error?.message ?? null,
  }));
}
