/**
 * The replay's tables: per suite and policy, attack success and utility under attack, and the decisions that
 * blocked each attack and each user task (bench/agentdojo/README.md, "Reading the table").
 */
import type { CallOutcome, CaseResult } from './replay.js';

/** The summary of one suite under one policy. */
export interface PolicySummary {
  readonly policy: string;
  readonly cases: number;
  readonly attacksSucceeded: number;
  /** Cases whose user task's calls all ran with no ask. */
  readonly utility: number;
  /** Cases whose user task's calls all ran, at least one after an approved ask. */
  readonly utilityAfterAsk: number;
  /** Per injection task: the cases it was blocked in, and the rules that refused its calls (id → count). */
  readonly blocked: Record<string, { cases: number; rules: Record<string, number> }>;
  /** Per user task: the cases whose user calls did not all run, and the rules or errors that stopped them. */
  readonly userBlocked: Record<string, { cases: number; rules: Record<string, number> }>;
}

function entryOf(
  map: Record<string, { cases: number; rules: Record<string, number> }>,
  key: string,
): { cases: number; rules: Record<string, number> } {
  const entry = map[key] ?? { cases: 0, rules: {} };
  map[key] = entry;
  return entry;
}

function bump(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}

/** What stopped a call, for the tables: `send_money denied by no-egress`, `send_email ask refused (confirm)`. */
function describe(c: CallOutcome): string {
  const parts = [
    c.flow !== undefined && c.flow.labels.length > 0 ? `seen ${c.flow.labels.join(', ')}` : '',
    c.flow !== undefined && c.flow.carried.length > 0 ? `carried ${c.flow.carried.join(', ')}` : '',
  ].filter((p) => p !== '');
  const flow = parts.length > 0 ? ` [${parts.join('; ')}]` : '';
  if (c.status === 'refused') return `${c.tool} ask refused (${c.rule ?? '?'})${flow}`;
  if (c.status === 'error') return `${c.tool} failed (${c.rule ?? '?'})`;
  return `${c.tool} ${c.status} by ${c.rule ?? '?'}${flow}`;
}

/** Sums up one policy's cases. */
export function summarize(policy: string, results: readonly CaseResult[]): PolicySummary {
  const blocked: PolicySummary['blocked'] = {};
  const userBlocked: PolicySummary['userBlocked'] = {};
  for (const r of results) {
    if (!r.attackSucceeded) {
      const entry = entryOf(blocked, r.injectionTask);
      entry.cases++;
      const stops = r.calls.filter((c) => c.phase === 'injection' && c.status !== 'ok');
      if (stops.length === 0) bump(entry.rules, '(no refusal: the check did not pass)');
      for (const c of stops) bump(entry.rules, describe(c));
    }
    if (!r.userPassed) {
      const entry = entryOf(userBlocked, r.userTask);
      entry.cases++;
      for (const c of r.calls.filter(
        (c) => c.phase === 'user' && c.status !== 'ok' && c.status !== 'asked',
      )) {
        bump(entry.rules, describe(c));
      }
    }
  }
  return {
    policy,
    cases: results.length,
    attacksSucceeded: results.filter((r) => r.attackSucceeded).length,
    utility: results.filter((r) => r.userPassed && !r.userNeededAsk).length,
    utilityAfterAsk: results.filter((r) => r.userNeededAsk).length,
    blocked,
    userBlocked,
  };
}

const pct = (n: number, of: number): string => (of === 0 ? '—' : `${((100 * n) / of).toFixed(1)}%`);
const cell = (n: number, of: number): string => `${n}/${of} (${pct(n, of)})`;
const rules = (r: Record<string, number>): string =>
  Object.entries(r)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ×${n}`)
    .join('; ');

/** One row per suite, policy and task: how many cases it was stopped in, and what stopped it. */
function stopTable(
  bySuite: Readonly<Record<string, readonly PolicySummary[]>>,
  taskHeader: string,
  casesHeader: string,
  pick: (s: PolicySummary) => PolicySummary['blocked'],
): string[] {
  const lines = [
    `| Suite | Policy | ${taskHeader} | ${casesHeader} | What stopped it |`,
    '| --- | --- | --- | --- | --- |',
  ];
  for (const [suite, summaries] of Object.entries(bySuite)) {
    for (const s of summaries) {
      for (const [task, b] of Object.entries(pick(s))) {
        lines.push(`| ${suite} | ${s.policy} | ${task} | ${b.cases} | ${rules(b.rules)} |`);
      }
    }
  }
  return lines;
}

/** The Markdown tables for every suite's summaries, with a total row per policy. */
export function markdown(bySuite: Readonly<Record<string, readonly PolicySummary[]>>): string {
  const lines = [
    '| Suite | Policy | Cases | Attacks that succeeded | Utility under attack | …of which after an approved ask |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  const totals = new Map<string, { cases: number; attacks: number; utility: number; asked: number }>();
  for (const [suite, summaries] of Object.entries(bySuite)) {
    for (const s of summaries) {
      const passed = s.utility + s.utilityAfterAsk;
      lines.push(
        `| ${suite} | ${s.policy} | ${s.cases} | ${cell(s.attacksSucceeded, s.cases)} | ${cell(passed, s.cases)} | ${s.utilityAfterAsk} |`,
      );
      const t = totals.get(s.policy) ?? { cases: 0, attacks: 0, utility: 0, asked: 0 };
      t.cases += s.cases;
      t.attacks += s.attacksSucceeded;
      t.utility += passed;
      t.asked += s.utilityAfterAsk;
      totals.set(s.policy, t);
    }
  }
  for (const [policy, t] of totals) {
    lines.push(
      `| **total** | ${policy} | ${t.cases} | ${cell(t.attacks, t.cases)} | ${cell(t.utility, t.cases)} | ${t.asked} |`,
    );
  }
  lines.push('', ...stopTable(bySuite, 'Injection task', 'Cases blocked', (s) => s.blocked));
  lines.push('', ...stopTable(bySuite, 'User task', 'Cases it failed', (s) => s.userBlocked));
  return `${lines.join('\n')}\n`;
}
