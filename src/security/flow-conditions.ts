/**
 * Flow conditions (issue 42, CONTRACT 3): the `flow` part of a rule's `when`, evaluated three-valued and fail closed,
 * described and explained in words, and the names a decision it took part in is audited with.
 */
import type { DecisionFlow } from '../errors.js';
import { type ConditionResult, ERRORED, FAILS_TO_HOLD, HOLDS } from './condition-result.js';
import type { ConditionInput, Evaluator, FlowCondition } from './conditions.js';
import type { CarriedAnswer } from './flow.js';

/** The `carried` answers of one check, per list of labels asked: conditions and the audit share one search. */
const carriedAnswers = new WeakMap<ConditionInput, Map<string, CarriedAnswer>>();

/**
 * What `input`'s arguments carry of `labels` (memoized per check), or `undefined` when the session has seen none of
 * them: content with a label the session never saw cannot have entered it, so there is nothing to search.
 */
function carriedFor(input: ConditionInput, labels: readonly string[]): CarriedAnswer | undefined {
  const flow = input.flow;
  if (flow === undefined || !labels.some((l) => flow.has(l))) return undefined;
  let answers = carriedAnswers.get(input);
  if (answers === undefined) {
    answers = new Map();
    carriedAnswers.set(input, answers);
  }
  const key = labels.join('\u0000');
  let answer = answers.get(key);
  if (answer === undefined) {
    answer = flow.carried(input.args, labels);
    answers.set(key, answer);
  }
  return answer;
}

/**
 * The flow part (issue 42, fail closed): without `context.labels` a `target` fails; without `context.flow`, `seen`,
 * `seenAny` and `carries` fail; `carries` fails when the index was truncated and nothing was found.
 */
export function compileFlow(f: FlowCondition): Evaluator {
  const { target, seen, seenAny, carries } = f;
  return (input) => {
    let out: ConditionResult = HOLDS;
    if (target !== undefined) {
      const labels = input.labels;
      if (labels === undefined || labels === null) out = ERRORED;
      else if (!target.every((l) => labels.includes(l))) return FAILS_TO_HOLD;
    }
    const flow = input.flow;
    if (seen !== undefined || seenAny !== undefined || carries !== undefined) {
      if (flow === undefined || flow === null) return ERRORED;
    }
    if (seen !== undefined && !seen.every((l) => flow!.has(l))) return FAILS_TO_HOLD;
    if (seenAny !== undefined && !seenAny.some((l) => flow!.has(l))) return FAILS_TO_HOLD;
    if (carries !== undefined) {
      const answer = carriedFor(input, carries);
      if (answer === undefined) return FAILS_TO_HOLD;
      if (answer.carried.length === 0) return answer.truncated ? ERRORED : FAILS_TO_HOLD;
    }
    return out;
  };
}

/**
 * What a decision a flow condition took part in is audited with (CONTRACT 3): the session labels the condition named
 * that the session had, the target labels it named that the target had, and what the arguments carry. Names only.
 */
export function flowFacts(f: FlowCondition, input: ConditionInput): DecisionFlow {
  const flow = input.flow;
  const named = new Set([...(f.seen ?? []), ...(f.seenAny ?? []), ...(f.carries ?? [])]);
  const labels = flow === undefined ? [] : [...named].filter((l) => flow.has(l)).sort();
  const carried = f.carries === undefined ? undefined : carriedFor(input, f.carries);
  const targetLabels = input.labels;
  return Object.freeze({
    labels: Object.freeze(labels),
    carried: Object.freeze((carried?.carried ?? []).map((c) => Object.freeze({ ...c }))),
    ...(f.target !== undefined
      ? { target: Object.freeze(f.target.filter((l) => targetLabels?.includes(l) ?? false)) }
      : {}),
    ...(carried?.truncated === true ? { truncated: true } : {}),
  });
}

function names(labels: readonly string[], joiner: 'and' | 'or'): string {
  const q = labels.map((l) => JSON.stringify(l));
  return q.length === 1 ? q[0]! : `${q.slice(0, -1).join(', ')} ${joiner} ${q[q.length - 1]}`;
}

export function describeFlow(f: FlowCondition): string[] {
  const parts: string[] = [];
  if (f.target !== undefined) parts.push(`the target is labeled ${names(f.target, 'and')}`);
  if (f.seen !== undefined) parts.push(`the session has seen ${names(f.seen, 'and')}`);
  if (f.seenAny !== undefined) parts.push(`the session has seen ${names(f.seenAny, 'or')}`);
  if (f.carries !== undefined) parts.push(`an argument carries content labeled ${names(f.carries, 'or')}`);
  return parts;
}

/** Why the flow part does not hold (or cannot be checked) for `input`, in words; undefined when it holds. */
export function explainFlow(f: FlowCondition, input: ConditionInput): string | undefined {
  if (f.target !== undefined) {
    if (input.labels === undefined) return "the target's labels are not known, so the condition cannot hold";
    const missing = f.target.filter((l) => !input.labels!.includes(l));
    if (missing.length > 0) return `the target is not labeled ${names(missing, 'and')}`;
  }
  const flow = input.flow;
  if (flow === undefined && (f.seen ?? f.seenAny ?? f.carries) !== undefined)
    return 'the call has no flow state, so the condition cannot hold';
  if (flow === undefined) return undefined;
  if (f.seen !== undefined) {
    const missing = f.seen.filter((l) => !flow.has(l));
    if (missing.length > 0) return `the session has not seen ${names(missing, 'and')}`;
  }
  if (f.seenAny !== undefined && !f.seenAny.some((l) => flow.has(l)))
    return `the session has seen none of ${names(f.seenAny, 'or')}`;
  if (f.carries !== undefined) {
    const answer = carriedFor(input, f.carries);
    if (answer === undefined || answer.carried.length === 0) {
      return answer?.truncated === true
        ? `no argument was found to carry content labeled ${names(f.carries, 'or')}, and the session's provenance index is full, so the condition cannot hold`
        : `no argument carries content labeled ${names(f.carries, 'or')}`;
    }
  }
  return undefined;
}
