/**
 * Replay before rollout (issue 40): every decision of a recording (see `recording.ts`) decided again under a new
 * policy by the same capability set the gate decides with, and the decisions that would flip — allow to deny, deny
 * to allow, to or from ask, or the same effect by another rule — grouped by rule and by tool.
 *
 * Nothing is assumed about a value the recording holds only as a digest: a request whose decision under the new
 * policy reads such an argument (any rule's condition on it, an allow's as well as a deny's) is "undecidable from the
 * recording" and counted apart, never as unchanged (fail closed). Quotas are not replayed: no counter holds last
 * week's counts, so each request is decided as if every quota had room. Flow conditions (issue 42) are decided from
 * the labels the recording kept (the target's and the session's); one that needs what it did not keep is undecidable.
 *
 * The review hash binds what a reviewer saw: SHA-256 of the canonical JSON of the new policy, the recording's
 * SHA-256 and the list of flips and undecidable requests (line, kind, rules). `interlock policy publish --reviewed`
 * recomputes it for the policy it publishes.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ConfigError, type ConfigIssue } from '../errors.js';
import { CapabilitySet } from './capability-set.js';
import { FlowState } from './flow.js';
import { type CompiledPattern, compilePattern, matchPattern } from './pattern.js';
import type { Policy } from './policy.js';
import {
  canonicalJson,
  parseRecordedDecision,
  type RecordedDecision,
  type RecordedValue,
} from './recording.js';
import type { RuleInfo } from './rules.js';
import type { Decision, DecisionEffect } from './types.js';

/** Examples kept per group of a {@link ReplayReport}. */
export const DEFAULT_REPLAY_EXAMPLES = 3;

/** A recording as read: its records in order and the SHA-256 of the bytes they were read from. */
export interface Recording {
  readonly file: string;
  readonly sha256: string;
  /** Each record with its line number in the file (1-based). */
  readonly records: readonly { readonly line: number; readonly record: RecordedDecision }[];
}

/** Reads a recording file; a line that is not a recorded decision is an `INVALID_CONFIG` error naming it. */
export async function readRecording(path: string): Promise<Recording> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`Cannot read the recording ${path}: ${(err as Error).message}`, {
      cause: err,
      file: path,
      issues: [{ path: '(file)', message: (err as NodeJS.ErrnoException).code ?? 'unreadable' }],
    });
  }
  return parseRecording(text, path);
}

/** Parses the text of a recording (JSON lines; blank lines are skipped). */
function parseRecording(text: string, file: string): Recording {
  const records: { line: number; record: RecordedDecision }[] = [];
  const issues: ConfigIssue[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    if (raw.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      issues.push({ path: `line ${i + 1}`, message: 'not JSON (a line cut short by a crash?)' });
      continue;
    }
    const parsed = parseRecordedDecision(value);
    if (parsed.ok) records.push({ line: i + 1, record: parsed.record });
    else
      for (const issue of parsed.error.issues.slice(0, 3))
        issues.push({ path: `line ${i + 1}: ${issue.path.join('.') || '(record)'}`, message: issue.message });
    if (issues.length >= 20) break;
  }
  if (issues.length > 0) {
    throw new ConfigError(
      `${file} is not a decision recording: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      { file, issues },
    );
  }
  return Object.freeze({ file, sha256: createHash('sha256').update(text).digest('hex'), records });
}

/** What decided a request: the effect before any approval, and the rule. */
export interface ReplayOutcome {
  readonly effect: DecisionEffect;
  readonly ruleId?: string | undefined;
}

/** An effect as a flip names it: a default deny is a deny (the rules say which). */
type Outcome = 'allow' | 'deny' | 'ask';
const outcomeOf = (effect: DecisionEffect): Outcome => (effect === 'default-deny' ? 'deny' : effect);

/**
 * How a decision changed: `allow→deny`, `deny→ask`, ..., or `rule` (the same outcome, decided by another rule, or by
 * none: a default deny).
 */
export type FlipKind = `${Outcome}→${Outcome}` | 'rule';

/** One request of the recording whose decision changed, or cannot be decided again. */
export interface ReplayExample {
  readonly line: number;
  readonly time: string;
  readonly agent?: string | undefined;
  readonly principal?: string | undefined;
  readonly resource: string;
  readonly action: string;
  /** `server/tool`, for a tool call. */
  readonly tool?: string | undefined;
  readonly args?: Readonly<Record<string, RecordedValue>> | undefined;
  readonly from: ReplayOutcome;
  /** The new decision; absent for an undecidable request. */
  readonly to?: (ReplayOutcome & { readonly reason: string }) | undefined;
  /** The flip; absent for an undecidable request. */
  readonly kind?: FlipKind | undefined;
  /**
   * For an undecidable request: the arguments recorded only as digests that the new policy reads, and
   * `(target labels)`, `(session labels)` or `(argument provenance)` when a flow condition of the new policy needs
   * what the recording does not hold.
   */
  readonly needs?: readonly string[] | undefined;
}

/** Flips (or undecidable requests) sharing a rule change or a tool. */
export interface ReplayGroup {
  /** `from-rule → to-rule` (`(none)` for no rule) in `byRule`; `server/tool` or the resource in the tool groups. */
  readonly key: string;
  readonly count: number;
  readonly kinds: Readonly<Record<string, number>>;
  readonly examples: readonly ReplayExample[];
}

/** What a new policy would change about a recording. */
export interface ReplayReport {
  readonly recording: { readonly file: string; readonly sha256: string; readonly records: number };
  readonly unchanged: number;
  readonly flipped: number;
  readonly undecidable: number;
  /** Flips by kind. */
  readonly kinds: Readonly<Record<string, number>>;
  readonly byRule: readonly ReplayGroup[];
  readonly byTool: readonly ReplayGroup[];
  /** Undecidable requests by tool; each example names the digested arguments the new policy reads. */
  readonly undecidableByTool: readonly ReplayGroup[];
  /** Binds the new policy, the recording and this list of changes: `interlock policy publish --reviewed`. */
  readonly reviewHash: string;
}

/** Options of {@link replayRecording}. */
export interface ReplayOptions {
  /** Examples kept per group. @default DEFAULT_REPLAY_EXAMPLES (3) */
  examples?: number | undefined;
}

/** Decides every request of `recording` again under `policy` and reports what flips. */
export function replayRecording(
  recording: Recording,
  policy: Policy,
  options: ReplayOptions = {},
): ReplayReport {
  const examples = options.examples ?? DEFAULT_REPLAY_EXAMPLES;
  const set = CapabilitySet.fromPolicy(policy, { onWarning: () => {} });
  const flowRules = set.rules
    .filter((r) => r.when?.flow !== undefined)
    .map((info) => ({ info, pattern: compilePattern(info.pattern) }));
  const flips: ReplayExample[] = [];
  const undecidable: ReplayExample[] = [];
  let unchanged = 0;
  for (const { line, record } of recording.records) {
    const { decision, needs } = decideAgain(set, record, flowRules);
    const d = record.decision;
    const from: ReplayOutcome = { effect: d.approved === undefined ? d.effect : 'ask', ruleId: d.ruleId };
    const base = {
      line,
      time: record.time,
      agent: record.agent,
      principal: record.principal,
      resource: record.resource,
      action: record.action,
      tool:
        record.server !== undefined && record.tool !== undefined
          ? `${record.server}/${record.tool}`
          : undefined,
      args: record.args,
      from,
    };
    if (needs.length > 0) {
      undecidable.push({ ...base, needs });
      continue;
    }
    const before = outcomeOf(from.effect);
    const after = outcomeOf(decision.effect);
    const kind: FlipKind | undefined =
      before !== after ? `${before}→${after}` : decision.ruleId !== from.ruleId ? 'rule' : undefined;
    if (kind === undefined) {
      unchanged++;
      continue;
    }
    flips.push({
      ...base,
      kind,
      to: { effect: decision.effect, ruleId: decision.ruleId, reason: decision.reason },
    });
  }
  const toolOf = (e: ReplayExample) => e.tool ?? e.resource;
  const ruleOf = (e: ReplayExample) => `${e.from.ruleId ?? '(none)'} → ${e.to?.ruleId ?? '(none)'}`;
  const kinds: Record<string, number> = {};
  for (const f of flips) kinds[f.kind as string] = (kinds[f.kind as string] ?? 0) + 1;
  const reviewHash = createHash('sha256')
    .update(
      canonicalJson({
        v: 1,
        policy,
        recording: recording.sha256,
        flips: flips.map((f) => [f.line, f.kind, f.from.ruleId ?? null, f.to?.ruleId ?? null]),
        undecidable: undecidable.map((u) => [u.line, u.needs]),
      }) as string,
    )
    .digest('hex');
  return Object.freeze({
    recording: { file: recording.file, sha256: recording.sha256, records: recording.records.length },
    unchanged,
    flipped: flips.length,
    undecidable: undecidable.length,
    kinds: sortedKeys(kinds),
    byRule: group(flips, ruleOf, examples),
    byTool: group(flips, toolOf, examples),
    undecidableByTool: group(undecidable, toolOf, examples),
    reviewHash,
  });
}

/**
 * The new decision for a recorded request, and the digested arguments it read. The arguments are a proxy over the
 * recorded ones: reading one recorded only as a digest marks the request undecidable, whatever the decision was.
 */
function decideAgain(
  set: CapabilitySet,
  record: RecordedDecision,
  flowRules: readonly FlowRule[],
): { decision: Decision; needs: string[] } {
  const needs = new Set<string>(flowNeeds(record, flowRules));
  let args: Record<string, unknown> | undefined;
  if (record.args !== undefined) {
    const target: Record<string, unknown> = {};
    for (const [name, recorded] of Object.entries(record.args)) {
      target[name] = 'value' in recorded ? recorded.value : Object.freeze({ ...recorded });
    }
    args = new Proxy(target, {
      get(t, key, receiver) {
        if (typeof key === 'string' && Object.hasOwn(t, key) && !('value' in record.args![key]!))
          needs.add(key);
        return Reflect.get(t, key, receiver);
      },
    });
  }
  let flow: FlowState | undefined;
  if (record.flow !== undefined) {
    flow = new FlowState();
    flow.record('(recording)', record.flow.labels);
  }
  // The target's labels as recorded, and those the new policy adds (labels only add: a label the new policy no longer
  // declares stays, which errs toward refusing).
  const labels =
    record.labels === undefined
      ? undefined
      : [
          ...new Set([
            ...record.labels,
            ...set.flowLabels.labelsFor(record.resource, record.annotations).all,
          ]),
        ];
  const decision = set.check(record.resource, record.action, {
    args,
    agent: record.agent,
    principal: record.principal,
    annotations: record.annotations,
    now: Date.parse(record.time),
    labels,
    flow,
  });
  return { decision, needs: [...needs].sort() };
}

interface FlowRule {
  readonly info: RuleInfo;
  readonly pattern: CompiledPattern;
}

/**
 * What the flow conditions of the new policy that could apply to `record` need and the recording does not hold
 * (judged from the rules, not from what one decision read: fail closed). A recorded flow state holds labels only,
 * so `carries` is decided only when the session had none of its labels (then nothing could carry them).
 */
function flowNeeds(record: RecordedDecision, rules: readonly FlowRule[]): string[] {
  const out: string[] = [];
  const at = Date.parse(record.time);
  for (const { info, pattern } of rules) {
    const f = info.when?.flow;
    if (f === undefined || (info.expiresAt !== undefined && at >= info.expiresAt)) continue;
    if (!info.actions.includes('*') && !info.actions.includes(record.action)) continue;
    if (!matchPattern(pattern, record.resource)) continue;
    if (f.target !== undefined && record.labels === undefined) out.push('(target labels)');
    const session = record.flow?.labels;
    if ((f.seen ?? f.seenAny ?? f.carries) !== undefined && session === undefined)
      out.push('(session labels)');
    if (f.carries !== undefined && session !== undefined && f.carries.some((l) => session.includes(l)))
      out.push('(argument provenance)');
  }
  return out;
}

function group(
  list: readonly ReplayExample[],
  keyOf: (e: ReplayExample) => string,
  examples: number,
): ReplayGroup[] {
  const groups = new Map<
    string,
    { count: number; kinds: Record<string, number>; examples: ReplayExample[] }
  >();
  for (const e of list) {
    const key = keyOf(e);
    let g = groups.get(key);
    if (g === undefined) {
      g = { count: 0, kinds: {}, examples: [] };
      groups.set(key, g);
    }
    g.count++;
    const kind = e.kind ?? 'undecidable';
    g.kinds[kind] = (g.kinds[kind] ?? 0) + 1;
    if (g.examples.length < examples) g.examples.push(e);
  }
  return [...groups]
    .map(([key, g]) => ({ key, ...g, kinds: sortedKeys(g.kinds) }))
    .sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The same counts with the kinds in one order (`allow→deny`, `deny→allow`, ..., `rule`), for stable output. */
function sortedKeys(counts: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const key of Object.keys(counts).sort()) out[key] = counts[key]!;
  return out;
}
