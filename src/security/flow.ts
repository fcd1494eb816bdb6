/**
 * Information flow (issue 42): what has entered a session, with which labels, and whether a call's arguments carry
 * it. A {@link FlowState} belongs to one session (an agent, a sub-agent derived from it, a gateway's downstream
 * session); the gate reads it through the check context (`context.flow`) and flow conditions decide on it.
 *
 * - **Labels** are names (`private`, `untrusted`, `egress`, or the user's own). Content that enters the session is
 *   {@link FlowState.record | recorded} with its source's labels; the session's labels only grow.
 * - **Provenance**: recorded text is indexed as fingerprints of its normalized fragments, so a call can be asked
 *   which labels its string arguments {@link FlowState.carried | carry} (a verbatim fragment of at least
 *   `minFragmentLength` characters after normalization). Only fingerprints are kept, never the text.
 * - **Derived sessions** ({@link FlowState.derive}) start with every label and fingerprint of their parent, and what
 *   they record is recorded in the parent too: a sub-agent can never drop a label, and its answer carries to the
 *   parent what it read.
 */

/** Options of a {@link FlowState}. */
export interface FlowStateOptions {
  /** Fewest characters (after normalization) a fragment must have to count as carried. @default 20 */
  minFragmentLength?: number | undefined;
  /**
   * Most characters of recorded text indexed per session; past it the oldest fingerprints are dropped, and every
   * later `carried` answer says `truncated`, so a condition on it fails closed. @default 4_194_304
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
  /** True when fingerprints were dropped (the index is full): a fragment may be carried and not found. */
  readonly truncated: boolean;
}

/** Default {@link FlowStateOptions.minFragmentLength}. */
export const DEFAULT_MIN_FRAGMENT_LENGTH = 20;
/** Default {@link FlowStateOptions.maxIndexedChars}. */
export const DEFAULT_MAX_INDEXED_CHARS = 4 * 1024 * 1024;

// Invisible and formatting characters (zero-width, bidi controls, soft hyphen) vanish in normalization, so they cannot
// hide a carried fragment.
const INVISIBLE = /[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]/g;
const SPACES = /\s+/g;

/** How text is compared for provenance: NFKC, lower case, invisible characters removed, white space collapsed. */
export function normalizeForFlow(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(INVISIBLE, '').replace(SPACES, ' ').trim();
}

interface Source {
  readonly resource: string;
  readonly labels: readonly string[];
}

/**
 * A 53-bit fingerprint of `s.slice(from, from + n)`: FNV-1a (32 bits) beside a second multiplicative hash (21 bits),
 * so a session of millions of fingerprints does not report a fragment it never saw (32 bits alone would).
 */
function hashAt(s: string, from: number, n: number): number {
  let a = 0x811c9dc5;
  let b = 0x9e3779b9;
  for (let i = from; i < from + n; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  return (a >>> 0) * 0x200000 + (b & 0x1fffff);
}

/** The labels and provenance of one session. */
export class FlowState {
  readonly #parent: FlowState | undefined;
  readonly #labels = new Set<string>();
  readonly #sources: Source[] = [];
  readonly #sourceIndex = new Map<string, number>();
  /** Fingerprint → the sources it came from (indexes into #sources). */
  #fingerprints = new Map<number, number[]>();
  #indexed = 0;
  #truncated = false;
  readonly minFragmentLength: number;
  readonly maxIndexedChars: number;

  constructor(options: FlowStateOptions = {}, parent?: FlowState) {
    this.minFragmentLength = options.minFragmentLength ?? DEFAULT_MIN_FRAGMENT_LENGTH;
    this.maxIndexedChars = options.maxIndexedChars ?? DEFAULT_MAX_INDEXED_CHARS;
    if (!Number.isInteger(this.minFragmentLength) || this.minFragmentLength < 4)
      throw new RangeError(
        `minFragmentLength must be an integer of at least 4, got ${this.minFragmentLength}`,
      );
    if (!Number.isInteger(this.maxIndexedChars) || this.maxIndexedChars < 0)
      throw new RangeError(`maxIndexedChars must be a non-negative integer, got ${this.maxIndexedChars}`);
    this.#parent = parent;
  }

  /** Every label the session has seen. */
  get labels(): ReadonlySet<string> {
    return this.#labels;
  }

  /** Whether `label` has entered the session. */
  has(label: string): boolean {
    return this.#labels.has(label);
  }

  /**
   * Records content that entered the session from `source` (a resource name, `mcp:mail:read_inbox`) with its
   * labels. `content` is indexed for provenance when given; a label is recorded even without content.
   */
  record(source: string, labels: readonly string[], content?: string): void {
    let index = this.#sourceIndex.get(source);
    if (index === undefined || !sameLabels(this.#sources[index]!.labels, labels)) {
      index = this.#sources.length;
      this.#sources.push({ resource: source, labels: [...labels] });
      this.#sourceIndex.set(source, index);
    }
    for (const label of labels) this.#labels.add(label);
    if (content !== undefined && labels.length > 0) this.#index(normalizeForFlow(content), index);
    this.#parent?.record(source, labels, content);
  }

  /**
   * The labels whose recorded fragments `args` carries: every string in `args` (nested too; object keys included),
   * normalized, is searched for fragments of at least `minFragmentLength` characters. `only` limits the answer to
   * those labels.
   */
  carried(args: Readonly<Record<string, unknown>> | undefined, only?: readonly string[]): CarriedAnswer {
    const out: CarriedLabel[] = [];
    if (args !== undefined && this.#fingerprints.size > 0) {
      const seen = new Set<string>();
      for (const name of Object.keys(args)) {
        for (const text of stringsIn(args[name])) this.#search(name, normalizeForFlow(text), only, seen, out);
      }
    }
    return { carried: out, truncated: this.#truncated };
  }

  /** A session derived from this one (a sub-agent): it starts with every label and fingerprint recorded here. */
  derive(options?: FlowStateOptions): FlowState {
    const child = new FlowState(
      {
        minFragmentLength: options?.minFragmentLength ?? this.minFragmentLength,
        maxIndexedChars: options?.maxIndexedChars ?? this.maxIndexedChars,
      },
      this,
    );
    for (const label of this.#labels) child.#labels.add(label);
    for (const s of this.#sources) {
      child.#sourceIndex.set(s.resource, child.#sources.length);
      child.#sources.push(s);
    }
    child.#fingerprints = new Map([...this.#fingerprints].map(([k, v]) => [k, [...v]]));
    child.#indexed = this.#indexed;
    child.#truncated = this.#truncated;
    return child;
  }

  /** The labels and sources, for audit records and spans. */
  snapshot(): FlowSnapshot {
    return {
      labels: [...this.#labels].sort(),
      sources: [...new Set(this.#sources.map((s) => s.resource))],
    };
  }

  #index(text: string, source: number): void {
    const n = this.minFragmentLength;
    if (text.length < n) return;
    for (let i = 0; i + n <= text.length; i++) {
      if (this.#indexed >= this.maxIndexedChars) {
        this.#truncated = true;
        return;
      }
      const h = hashAt(text, i, n);
      const at = this.#fingerprints.get(h);
      if (at === undefined) this.#fingerprints.set(h, [source]);
      else if (!at.includes(source)) at.push(source);
      this.#indexed++;
    }
  }

  #search(
    argument: string,
    text: string,
    only: readonly string[] | undefined,
    seen: Set<string>,
    out: CarriedLabel[],
  ): void {
    const n = this.minFragmentLength;
    for (let i = 0; i + n <= text.length; i++) {
      const at = this.#fingerprints.get(hashAt(text, i, n));
      if (at === undefined) continue;
      for (const s of at) {
        const source = this.#sources[s]!;
        for (const label of source.labels) {
          if (only !== undefined && !only.includes(label)) continue;
          const key = `${argument}\u0000${label}\u0000${source.resource}`;
          if (seen.has(key)) continue;
          seen.add(key);
          out.push({ argument, label, source: source.resource });
        }
      }
    }
  }
}

function sameLabels(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((l, i) => l === b[i]);
}

/** Every string in a JSON value (object keys included), depth first. */
function* stringsIn(value: unknown, depth = 0): Generator<string> {
  if (depth > 64) return;
  if (typeof value === 'string') yield value;
  else if (Array.isArray(value)) for (const v of value) yield* stringsIn(v, depth + 1);
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      yield k;
      yield* stringsIn(v, depth + 1);
    }
}
