/**
 * The direct `tools/call` requests in flight (client.ts), by id, in a table whose size does not depend on how many
 * calls went by: a ring of {@link RING_SLOTS} slots indexed by the low bits of the id (the SDK hands ids out in
 * increasing order), and beside it a map for the calls a newer call found in its slot (a slow call, or one that never
 * answers). With one call that never answers, a million calls later the ring still has its {@link RING_SLOTS} slots
 * and the map one entry (issue 43, "memory that stays flat"); a timer tick looks at both, never at more.
 *
 * Not a `Map` alone: V8 re-allocates a `Map`'s table as entries come and go, and for a long-lived one it does so in the
 * old generation, where the abandoned table keeps whatever its entries pointed to alive until the next full
 * collection. A call's state holds its promise and with it the whole pipeline of the call, so every call's objects
 * were being promoted (docs/performance.md, seventh pass). Only calls that outlive {@link RING_SLOTS} newer ones go to
 * the map, and they are long-lived anyway.
 * @internal
 */

/** The slots of the ring: far more than the calls one connection has in flight at once. */
export const RING_SLOTS = 1024;
const MASK = RING_SLOTS - 1;

/** What the table needs of a call: its id and its deadline. */
export interface Slotted {
  readonly id: number;
  /** When the call times out (ms since the epoch). */
  deadline: number;
}

/** The calls in flight, by id (see the module comment). */
export class DirectCalls<C extends Slotted> {
  readonly #slots: (C | undefined)[] = new Array<C | undefined>(RING_SLOTS).fill(undefined);
  /** Calls moved out of the ring because a newer call wanted their slot. */
  readonly #aside = new Map<number, C>();
  #size = 0;

  /** How many calls are in flight. */
  get size(): number {
    return this.#size;
  }

  /** How many entries the table holds room for: the ring's slots and the calls beside it. */
  get footprint(): number {
    return RING_SLOTS + this.#aside.size;
  }

  get(id: number): C | undefined {
    const call = this.#slots[id & MASK];
    if (call !== undefined && call.id === id) return call;
    return this.#aside.size === 0 ? undefined : this.#aside.get(id);
  }

  add(call: C): void {
    const slot = call.id & MASK;
    const held = this.#slots[slot];
    // A call older than RING_SLOTS newer ones still runs: it moves beside the ring, the ring does not grow.
    if (held !== undefined) this.#aside.set(held.id, held);
    this.#slots[slot] = call;
    this.#size++;
  }

  /** The call with this id, taken out; undefined when it already ended (or never was a direct call). */
  take(id: number): C | undefined {
    const slot = id & MASK;
    const call = this.#slots[slot];
    if (call !== undefined && call.id === id) {
      this.#slots[slot] = undefined;
      this.#size--;
      return call;
    }
    if (this.#aside.size === 0) return undefined;
    const aside = this.#aside.get(id);
    if (aside === undefined) return undefined;
    this.#aside.delete(id);
    this.#size--;
    return aside;
  }

  /** Every call in flight, taken out (the connection closed). */
  drain(): C[] {
    const calls = this.#slots.filter((call): call is C => call !== undefined);
    calls.push(...this.#aside.values());
    this.#slots.fill(undefined);
    this.#aside.clear();
    this.#size = 0;
    return calls;
  }

  /** The ids of the calls whose deadline is past at `now`, and the earliest deadline of the others (or Infinity). */
  due(now: number): { ids: number[]; next: number } {
    const ids: number[] = [];
    let next = Number.POSITIVE_INFINITY;
    const visit = (call: C | undefined) => {
      if (call === undefined) return;
      if (call.deadline <= now) ids.push(call.id);
      else if (call.deadline < next) next = call.deadline;
    };
    for (const call of this.#slots) visit(call);
    for (const call of this.#aside.values()) visit(call);
    return { ids, next };
  }
}
