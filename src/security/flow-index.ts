/**
 * The provenance index of a session tree (issue 42): winnowed fingerprints of normalized recorded text (Schleimer,
 * Wilkerson and Aiken, "Winnowing: local algorithms for document fingerprinting", SIGMOD 2003), sorted for binary
 * search, with the sources they came from. Text is never kept. `FlowState` (flow.ts) owns the guarantee and the API.
 */

/** Most distinct sources (a resource with its labels) whose content one session indexes; later ones truncate. */
export const MAX_FLOW_SOURCES = 0xffff;

/** A resource content came from, with the labels it was recorded with. */
export interface Source {
  readonly resource: string;
  readonly labels: readonly string[];
}

// Two polynomial hashes modulo 2^32 with odd bases, rolled over the fragment in 32-bit integer arithmetic
// (Math.imul), each mixed by MurmurHash3's finalizer so every bit depends on every character. The first (32 bits)
// orders fingerprints and picks each window's smallest; 16 bits of the second complete the 48-bit fingerprint.
const B1 = 0x01000193;
const B2 = 0x5bd1e995;

function power(base: number, exp: number): number {
  let r = 1;
  for (let i = 0; i < exp; i++) r = Math.imul(r, base);
  return r;
}

/** MurmurHash3's 32-bit finalizer. */
function mix(h: number): number {
  let x = h ^ (h >>> 16);
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/**
 * The winnowed fingerprints of `text`, as (hi, lo) pairs: hi is the first hash, lo the low 16 bits of the second.
 * `emit` is called once per kept fingerprint (a window whose smallest is the one kept before keeps nothing new).
 */
function winnow(
  text: string,
  k: number,
  w: number,
  emit: (hi: number, lo: number) => void,
  scratch: Scratch,
): void {
  const count = text.length - k + 1;
  if (count <= 0) return;
  const his = scratch.his(count);
  const los = scratch.los(count);
  let h1 = 0;
  let h2 = 0;
  for (let i = 0; i < k; i++) {
    const c = text.charCodeAt(i);
    h1 = (Math.imul(h1, B1) + c) | 0;
    h2 = (Math.imul(h2, B2) + c) | 0;
  }
  his[0] = mix(h1);
  los[0] = mix(h2) >>> 16;
  const top1 = scratch.top1;
  const top2 = scratch.top2;
  for (let i = 1; i < count; i++) {
    const out = text.charCodeAt(i - 1);
    const inc = text.charCodeAt(i + k - 1);
    h1 = (Math.imul((h1 - Math.imul(out, top1)) | 0, B1) + inc) | 0;
    h2 = (Math.imul((h2 - Math.imul(out, top2)) | 0, B2) + inc) | 0;
    his[i] = mix(h1);
    los[i] = mix(h2) >>> 16;
  }
  // Robust winnowing: in each window keep the smallest hash, the rightmost one on a tie; a monotonic queue of
  // positions gives every window's smallest in one pass. A text shorter than one window is one window.
  const width = Math.min(w, count);
  const queue = scratch.queue(count);
  let head = 0;
  let tail = 0;
  let last = -1;
  for (let i = 0; i < count; i++) {
    const h = his[i]!;
    while (tail > head && his[queue[tail - 1]!]! >= h) tail--;
    queue[tail++] = i;
    if (queue[head]! <= i - width) head++;
    if (i >= width - 1) {
      const at = queue[head]!;
      if (at !== last) {
        last = at;
        emit(his[at]!, los[at]!);
      }
    }
  }
}

/** Texts longer than this get arrays of their own, dropped after use, rather than kept for the next call. */
const SCRATCH_LIMIT = 1 << 14;

/** Typed arrays reused across calls of one index (no allocation per search of a small argument). */
class Scratch {
  #his = new Uint32Array(256);
  #los = new Uint16Array(256);
  #queue = new Int32Array(256);
  readonly top1: number;
  readonly top2: number;

  constructor(k: number) {
    this.top1 = power(B1, k - 1);
    this.top2 = power(B2, k - 1);
  }

  his(n: number): Uint32Array {
    if (n > SCRATCH_LIMIT) return new Uint32Array(n);
    if (this.#his.length < n) this.#his = new Uint32Array(grow(n));
    return this.#his;
  }

  los(n: number): Uint16Array {
    if (n > SCRATCH_LIMIT) return new Uint16Array(n);
    if (this.#los.length < n) this.#los = new Uint16Array(grow(n));
    return this.#los;
  }

  queue(n: number): Int32Array {
    if (n > SCRATCH_LIMIT) return new Int32Array(n);
    if (this.#queue.length < n) this.#queue = new Int32Array(grow(n));
    return this.#queue;
  }
}

const EMPTY = new Uint32Array(0);

function grow(n: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(n, 256)));
}

/**
 * The fingerprints of one session tree, sorted for binary search: `hi` (32 bits) and `lo` (16 bits of the second
 * hash above the source id's 16 bits) in two typed arrays, 8 bytes a fingerprint. New fingerprints go to a small
 * sorted run merged into the main one when it grows past an eighth of it, so recording costs amortized
 * O(n log n), and the arrays hold exactly the fingerprints (a merge briefly holds both copies).
 */
export class ProvenanceIndex {
  readonly k: number;
  readonly w: number;
  readonly maxIndexedChars: number;
  readonly sources: Source[] = [];
  readonly #sourceIds = new Map<string, number>();
  #mainHi: Uint32Array = EMPTY;
  #mainLo: Uint32Array = EMPTY;
  #mainLength = 0;
  #runHi: Uint32Array = EMPTY;
  #runLo: Uint32Array = EMPTY;
  #runLength = 0;
  indexed = 0;
  truncated = false;
  #scratch: Scratch | undefined;

  constructor(k: number, w: number, maxIndexedChars: number) {
    this.k = k;
    this.w = w;
    this.maxIndexedChars = maxIndexedChars;
  }

  get scratch(): Scratch {
    this.#scratch ??= new Scratch(this.k);
    return this.#scratch;
  }

  /** Fingerprints held. */
  get size(): number {
    return this.#mainLength + this.#runLength;
  }

  /** Bytes of the typed arrays: what the fingerprints cost. */
  get bytes(): number {
    return (
      this.#mainHi.byteLength + this.#mainLo.byteLength + this.#runHi.byteLength + this.#runLo.byteLength
    );
  }

  sourceId(resource: string, labels: readonly string[]): number | undefined {
    const key = `${resource}\u0000${labels.join('\u0000')}`;
    let id = this.#sourceIds.get(key);
    if (id === undefined) {
      if (this.sources.length >= MAX_FLOW_SOURCES) return undefined;
      id = this.sources.length;
      this.sources.push({ resource, labels: Object.freeze([...labels]) });
      this.#sourceIds.set(key, id);
    }
    return id;
  }

  add(text: string, source: number): void {
    if (text.length < this.k) return;
    if (this.indexed + text.length > this.maxIndexedChars) {
      this.truncated = true;
      return;
    }
    this.indexed += text.length;
    // One source per call: sort the 48-bit fingerprints packed in one number, then split them again.
    const keys: number[] = [];
    winnow(text, this.k, this.w, (h, l) => keys.push(h * 0x10000 + l), this.scratch);
    const sorted = Float64Array.from(keys).sort();
    const hi = new Uint32Array(sorted.length);
    const lo = new Uint32Array(sorted.length);
    for (let i = 0; i < sorted.length; i++) {
      const key = sorted[i]!;
      hi[i] = Math.floor(key / 0x10000);
      lo[i] = ((key % 0x10000) * 0x10000 + source) >>> 0;
    }
    [this.#runHi, this.#runLo, this.#runLength] = merge(
      this.#runHi,
      this.#runLo,
      this.#runLength,
      hi,
      lo,
      hi.length,
    );
    if (this.#runLength * 8 > this.#mainLength) {
      [this.#mainHi, this.#mainLo, this.#mainLength] = merge(
        this.#mainHi,
        this.#mainLo,
        this.#mainLength,
        this.#runHi,
        this.#runLo,
        this.#runLength,
      );
      this.#runHi = EMPTY;
      this.#runLo = EMPTY;
      this.#runLength = 0;
    }
  }

  /** Calls `found` with the source id of every fingerprint of `text` held here. */
  search(text: string, found: (source: number) => void): void {
    if (this.size === 0 || text.length < this.k) return;
    winnow(
      text,
      this.k,
      this.w,
      (h, l) => {
        lookup(this.#mainHi, this.#mainLo, this.#mainLength, h, l, found);
        lookup(this.#runHi, this.#runLo, this.#runLength, h, l, found);
      },
      this.scratch,
    );
  }
}

/** Merges two sorted runs into a new one, dropping exact duplicates (same fingerprint, same source). */
function merge(
  aHi: Uint32Array,
  aLo: Uint32Array,
  aLength: number,
  bHi: Uint32Array,
  bLo: Uint32Array,
  bLength: number,
): [Uint32Array, Uint32Array, number] {
  const hi = new Uint32Array(aLength + bLength);
  const lo = new Uint32Array(aLength + bLength);
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < aLength || j < bLength) {
    let h: number;
    let l: number;
    if (j >= bLength || (i < aLength && (aHi[i]! < bHi[j]! || (aHi[i] === bHi[j] && aLo[i]! <= bLo[j]!)))) {
      h = aHi[i]!;
      l = aLo[i++]!;
    } else {
      h = bHi[j]!;
      l = bLo[j++]!;
    }
    if (n > 0 && hi[n - 1] === h && lo[n - 1] === l) continue;
    hi[n] = h;
    lo[n++] = l;
  }
  return [hi, lo, n];
}

/** Reports the source of every entry of a sorted run whose fingerprint is (h, l). */
function lookup(
  hi: Uint32Array,
  lo: Uint32Array,
  length: number,
  h: number,
  l: number,
  found: (source: number) => void,
): void {
  let a = 0;
  let b = length;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if (hi[mid]! < h) a = mid + 1;
    else b = mid;
  }
  for (let i = a; i < length && hi[i] === h; i++) {
    const v = lo[i]!;
    if (v >>> 16 === l) found(v & 0xffff);
  }
}
