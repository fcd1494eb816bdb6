/**
 * Information flow (issue 42): what has entered a session, with which labels, and whether a call's arguments carry
 * it. A {@link FlowState} belongs to one session (an agent, a sub-agent derived from it, a gateway's downstream
 * session); the gate reads it through the check context (`context.flow`) and flow conditions decide on it.
 *
 * - **Labels** are names (`private`, `untrusted`, `egress`, or the user's own). Content that enters the session is
 *   {@link FlowState.record | recorded} with its source's labels; the session's labels only grow.
 * - **Provenance**: recorded text is normalized ({@link normalizeForFlow}) and fingerprinted by winnowing (Schleimer,
 *   Wilkerson and Aiken, "Winnowing: local algorithms for document fingerprinting", SIGMOD 2003): of every window of
 *   `windowSize` consecutive `minFragmentLength`-character fragments, the one with the smallest hash is kept. An
 *   argument is fingerprinted the same way and its fingerprints looked up. Only fingerprints are kept, never text:
 *   about `2 / (windowSize + 1)` fingerprints per character, 8 bytes each.
 * - **The guarantee**: every fragment of recorded text at least `minFragmentLength + windowSize - 1` characters long
 *   (after normalization), found anywhere in a string argument, is reported: the window of fragments that lies inside
 *   it is the same window on both sides, so both keep its smallest hash. A shared fragment shorter than
 *   `minFragmentLength` is never reported (no whole fragment to share); one in between may be. A false report needs
 *   two different fragments with equal 48-bit fingerprints.
 * - **Derived sessions** ({@link FlowState.derive}) start with every label of their parent, and what they record is
 *   recorded in the parent too: a sub-agent can never drop a label, and what it read reaches its parent. A session
 *   and all the sessions derived from it share one provenance index (its root's), so a derived session's search
 *   also finds what its parent or siblings recorded later: it may find more, never less.
 */
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { once } from '../lazy.js';
import { describeIssues, toConfigIssues } from '../zod-issues.js';
import { ProvenanceIndex } from './flow-index.js';

/** Options of a {@link FlowState}. */
export interface FlowStateOptions {
  /**
   * Characters (after normalization) of the fragments fingerprinted: a shorter shared fragment is never reported.
   * @default DEFAULT_MIN_FRAGMENT_LENGTH (20)
   */
  minFragmentLength?: number | undefined;
  /**
   * Fragments per winnowing window: one fingerprint is kept per window, so memory is about
   * `2 / (windowSize + 1)` fingerprints per character, and every shared fragment of at least
   * `minFragmentLength + windowSize - 1` characters is reported. 1 keeps every fragment.
   * @default DEFAULT_FLOW_WINDOW_SIZE (16)
   */
  windowSize?: number | undefined;
  /**
   * Most characters of recorded text indexed per session (the root and every session derived from it); past it
   * later text is no longer indexed (its labels still are), and every `carried` answer says `truncated`, so a
   * condition on it fails closed. @default DEFAULT_MAX_INDEXED_CHARS (4 194 304)
   */
  maxIndexedChars?: number | undefined;
}

/** One label a call's argument carries: which argument, which label, from which source (a resource name). */
export interface CarriedLabel {
  readonly argument: string;
  readonly label: string;
  readonly source: string;
}

/** What a flow decision is audited and traced with: names only, never data. */
export interface FlowSnapshot {
  /** Every label the session has seen, sorted. */
  readonly labels: readonly string[];
  /** The resources content came from, in the order they first entered. */
  readonly sources: readonly string[];
}

/** The answer of {@link FlowState.carried}. */
export interface CarriedAnswer {
  readonly carried: readonly CarriedLabel[];
  /** True when recorded text was left unindexed (the index is full): a fragment may be carried and not found. */
  readonly truncated: boolean;
}

/** Default {@link FlowStateOptions.minFragmentLength}. */
export const DEFAULT_MIN_FRAGMENT_LENGTH = 20;
/** Default {@link FlowStateOptions.windowSize}. */
export const DEFAULT_FLOW_WINDOW_SIZE = 16;
/** Default {@link FlowStateOptions.maxIndexedChars}. */
export const DEFAULT_MAX_INDEXED_CHARS = 4 * 1024 * 1024;

/**
 * The fields of {@link FlowStateOptions} as zod schemas, built on first use: the options and the policy's `flow`
 * section (flow-labels.ts) share them.
 */
export const flowStateOptionShape = once(() => ({
  minFragmentLength: z
    .number()
    .int()
    .min(8)
    .max(4096)
    .optional()
    .describe(
      'Characters (after normalization) a recorded fragment must share with an argument to count as carried. Default 20.',
    ),
  windowSize: z
    .number()
    .int()
    .min(1)
    .max(256)
    .optional()
    .describe(
      'Fragments per winnowing window: every shared fragment of at least minFragmentLength + windowSize - 1 characters is found; larger windows keep fewer fingerprints. Default 16.',
    ),
  maxIndexedChars: z
    .number()
    .int()
    .min(0)
    .max(2 ** 32)
    .optional()
    .describe(
      'Most characters of recorded text indexed per session; past it carries conditions fail closed. Default 4194304.',
    ),
}));

const optionsSchema = once(() => z.strictObject(flowStateOptionShape()));

// Invisible and formatting characters (zero-width, bidi controls, soft hyphen) vanish in normalization, so they cannot
// hide a carried fragment.
const INVISIBLE = /[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]/g;
const SPACES = /\s+/g;

/** How text is compared for provenance: NFKC, lower case, invisible characters removed, white space collapsed. */
export function normalizeForFlow(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(INVISIBLE, '').replace(SPACES, ' ').trim();
}

/** The labels and provenance of one session. */
export class FlowState {
  #parent: FlowState | undefined;
  #index: ProvenanceIndex;
  readonly #labels = new Set<string>();
  readonly #sources: string[] = [];
  readonly #sourceNames = new Set<string>();
  /** Characters (after normalization) of the fragments fingerprinted. */
  readonly minFragmentLength: number;
  /** Fragments per winnowing window. */
  readonly windowSize: number;
  /** Most characters of recorded text indexed per session tree. */
  readonly maxIndexedChars: number;

  /** Throws `ConfigError` (`INVALID_CONFIG`) naming each bad option. */
  constructor(options: FlowStateOptions = {}) {
    const parsed = optionsSchema().safeParse(options);
    if (!parsed.success) {
      const issues = toConfigIssues(parsed.error);
      throw new ConfigError(`Invalid FlowState options: ${describeIssues(issues)}`, { issues });
    }
    this.minFragmentLength = parsed.data.minFragmentLength ?? DEFAULT_MIN_FRAGMENT_LENGTH;
    this.windowSize = parsed.data.windowSize ?? DEFAULT_FLOW_WINDOW_SIZE;
    this.maxIndexedChars = parsed.data.maxIndexedChars ?? DEFAULT_MAX_INDEXED_CHARS;
    this.#index = new ProvenanceIndex(this.minFragmentLength, this.windowSize, this.maxIndexedChars);
  }

  /** Every label the session has seen: a copy (labels only grow, through {@link record}). */
  get labels(): ReadonlySet<string> {
    return new Set(this.#labels);
  }

  /** Whether `label` has entered the session. */
  has(label: string): boolean {
    return this.#labels.has(label);
  }

  /**
   * The shortest shared fragment every `carried` answer is sure to find: `minFragmentLength + windowSize - 1`
   * characters after normalization.
   */
  get guaranteedFragmentLength(): number {
    return this.minFragmentLength + this.windowSize - 1;
  }

  /**
   * Records content that entered the session from `source` (a resource name, `mcp:mail:read_inbox`) with its
   * labels. `content` is indexed for provenance when given and some label is; a label is recorded even without
   * content. A derived session records into its parent too.
   */
  record(source: string, labels: readonly string[], content?: string): void {
    this.#note(source, labels);
    if (content === undefined || labels.length === 0) return;
    const index = this.#index;
    const id = index.sourceId(source, [...new Set(labels)].sort());
    if (id === undefined) index.truncated = true;
    else index.add(normalizeForFlow(content), id);
  }

  /**
   * The labels whose recorded fragments `args` carries: every string in `args` (nested too; names and keys included),
   * normalized, is searched for recorded fragments (see the guarantee above). `only` limits the answer to those
   * labels.
   */
  carried(args: Readonly<Record<string, unknown>> | undefined, only?: readonly string[]): CarriedAnswer {
    const index = this.#index;
    const out: CarriedLabel[] = [];
    if (args !== undefined && args !== null && index.size > 0) {
      const seen = new Set<string>();
      for (const name of Object.keys(args)) {
        const hits = new Set<number>();
        const found = (s: number) => hits.add(s);
        // The argument's name too: a model writes the names as well as the values.
        index.search(normalizeForFlow(name), found);
        for (const text of stringsIn(args[name])) index.search(normalizeForFlow(text), found);
        for (const s of hits) {
          const source = index.sources[s]!;
          for (const label of source.labels) {
            if (only !== undefined && !only.includes(label)) continue;
            const key = `${name}\u0000${label}\u0000${source.resource}`;
            if (seen.has(key)) continue;
            seen.add(key);
            out.push({ argument: name, label, source: source.resource });
          }
        }
      }
    }
    return { carried: out, truncated: index.truncated };
  }

  /**
   * A session derived from this one (a sub-agent): it starts with every label and source recorded here, shares this
   * session's provenance index, and what it records is recorded here too.
   */
  derive(): FlowState {
    const child = new FlowState({
      minFragmentLength: this.minFragmentLength,
      windowSize: this.windowSize,
      maxIndexedChars: this.maxIndexedChars,
    });
    child.#parent = this;
    child.#index = this.#index;
    for (const label of this.#labels) child.#labels.add(label);
    for (const s of this.#sources) {
      child.#sources.push(s);
      child.#sourceNames.add(s);
    }
    return child;
  }

  /** The labels and sources, for audit records and spans. */
  snapshot(): FlowSnapshot {
    return { labels: [...this.#labels].sort(), sources: [...this.#sources] };
  }

  /** What the provenance index holds: fingerprints, the bytes they take, and characters indexed. */
  get indexStats(): {
    readonly fingerprints: number;
    readonly bytes: number;
    readonly indexedChars: number;
    readonly truncated: boolean;
  } {
    const i = this.#index;
    return { fingerprints: i.size, bytes: i.bytes, indexedChars: i.indexed, truncated: i.truncated };
  }

  #note(source: string, labels: readonly string[]): void {
    for (const label of labels) this.#labels.add(label);
    if (!this.#sourceNames.has(source)) {
      this.#sourceNames.add(source);
      this.#sources.push(source);
    }
    const parent = this.#parent;
    if (parent !== undefined) parent.#note(source, labels);
  }
}

/** Every string in a JSON value (object keys included), depth first, 64 levels at most. */
export function* stringsIn(value: unknown, depth = 0): Generator<string> {
  if (depth > 64) return;
  if (typeof value === 'string') yield value;
  else if (Array.isArray(value)) for (const v of value) yield* stringsIn(v, depth + 1);
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      yield k;
      yield* stringsIn(v, depth + 1);
    }
}
