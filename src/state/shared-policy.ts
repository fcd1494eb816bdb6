/**
 * One policy for a fleet (issues 16 and 38): versioned bundles in the state store, a broadcast on every change, and
 * membership by heartbeat, so that a publish or a revoke returns only once every live process applies it.
 *
 * - Every write is a compare-and-set on the stored text, under a lock: two revokes at once never resurrect a rule.
 * - Each process holds a lease: it decides with its revision only while it has confirmed, less than `leaseMs` ago,
 *   that the store holds exactly that revision. A process that cannot confirm it (the store is away, lost its data,
 *   or holds something invalid) refuses every call until it can: it fails closed.
 * - `publish` and `revoke` return when every live member applied the new revision. A member that did not within
 *   `leaseMs` (plus a margin) is named in a `POLICY_NOT_APPLIED` error, and its lease has run out by then: it
 *   refuses every call until it catches up.
 * - A store that lost the bundle (a restart without persistence) gets back the newest one any live process holds
 *   before a write is accepted, and a new revision is numbered above every revision a member reports.
 */
import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { z } from 'zod';
import { ConfigError, PolicyError } from '../errors.js';
import { CapabilitySet, type CapabilitySetOptions } from '../security/capability-set.js';
import { SCHEME_ACTIONS } from '../security/pattern.js';
import { type Policy, parsePolicy } from '../security/policy.js';
import { describeIssues } from '../zod-issues.js';
import {
  type Bundle,
  bundleText,
  MAX_POLICY_VERSION,
  memberText,
  parseBundle,
  parseMember,
  type StoredBundle,
} from './policy-bundle.js';
import { PolicyNotAppliedError, StateInvalidError, type StateStore, StateUnavailableError } from './types.js';

/** How long a process decides with a revision it has not confirmed in the store; it heartbeats 3 times as often. */
export const DEFAULT_POLICY_LEASE_MS = 3_000;

const EMPTY_POLICY: Policy = { version: 1, rules: [] };

/** A valid bundle as read from (or written to) the store. */
type Stored = { readonly text: string; readonly bundle: Bundle };

/** Whether two bundles are the same revision (a restored copy of a revision is the same revision). */
function sameRevision(a: Bundle, b: Bundle): boolean {
  return a.version === b.version && JSON.stringify(a.policy) === JSON.stringify(b.policy);
}

/** Clock rate drift and timer lateness a lease allows for, in ms. */
function marginOf(leaseMs: number): number {
  return Math.max(50, Math.floor(leaseMs / 10));
}

/** How a write treats the bundle it reads: `initial` writes only into an empty store. */
type WriteMode = 'initial' | 'publish' | 'revoke';

const OptionsSchema = z.object({
  name: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,128}$/, "1-128 characters of A-Z, a-z, 0-9, '_.:-'")
    .optional(),
  leaseMs: z.number().int().min(100).max(600_000).optional(),
  member: z
    .string()
    .regex(/^[\p{L}\p{N}\p{P}\p{S}]{1,200}$/u, '1-200 characters, no spaces or control characters')
    .optional(),
});

/** Options of {@link SharedPolicy.open}. */
export interface SharedPolicyOptions {
  /** The policy's name in the store: processes share a policy by name. @default 'default' */
  name?: string | undefined;
  /** Published as the first revision when the store holds no policy of that name (and no process restores one). */
  initial?: Policy | undefined;
  /** Options of the capability set kept in sync (its clock, a quota counter...). */
  capabilities?: CapabilitySetOptions | undefined;
  /**
   * How long this process decides with a revision it has not confirmed in the store, in ms; it confirms (and
   * heartbeats) every third of it. It also bounds how long `publish` waits for lagging processes. Every process
   * sharing a policy should use the same value. @default DEFAULT_POLICY_LEASE_MS (3 000)
   */
  leaseMs?: number | undefined;
  /** This process's name in errors that list lagging processes. @default `<host>:<pid>:<random>` */
  member?: string | undefined;
  /** Told when this process cannot confirm its revision (it then refuses every call) or reads an invalid one. */
  onError?: ((error: unknown) => void) | undefined;
  /** Told after a new revision was applied to the set. */
  onUpdate?: ((version: number) => void) | undefined;
}

/** A policy shared through a {@link StateStore}. Create it with {@link SharedPolicy.open}. */
export class SharedPolicy implements AsyncDisposable {
  /** The set this process decides with: give it to the manager or the engine. */
  readonly capabilities: CapabilitySet;
  /** This process's name among the members. */
  readonly member: string;
  readonly #store: StateStore;
  readonly #name: string;
  readonly #leaseMs: number;
  readonly #onError: (error: unknown) => void;
  readonly #onUpdate: ((version: number) => void) | undefined;
  #stored: Stored | undefined;
  /** Until when (performance.now) the revision held is confirmed; after it, every call is refused. */
  #leaseUntil = 0;
  #fenced = true;
  #fenceTimer: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #syncing: Promise<void> = Promise.resolve();
  #queued: Promise<void> | undefined;
  #unsubscribe: (() => Promise<void>) | undefined;
  #closed = false;

  private constructor(store: StateStore, options: SharedPolicyOptions, name: string, member: string) {
    this.#store = store;
    this.#name = name;
    this.member = member;
    this.#leaseMs = options.leaseMs ?? DEFAULT_POLICY_LEASE_MS;
    this.#onError = options.onError ?? (() => {});
    this.#onUpdate = options.onUpdate;
    this.capabilities = new CapabilitySet(options.capabilities);
  }

  /**
   * Joins the policy's members, loads the current revision (publishing `initial` if the store has none) and follows
   * every later one. Throws `INVALID_CONFIG` for bad options and `STATE_UNAVAILABLE` when the store cannot answer.
   */
  static async open(store: StateStore, options: SharedPolicyOptions = {}): Promise<SharedPolicy> {
    const parsed = OptionsSchema.safeParse(options);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
      throw new ConfigError(`Invalid SharedPolicy options: ${describeIssues(issues)}.`, { issues });
    }
    const name = parsed.data.name ?? 'default';
    const member =
      parsed.data.member ?? `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
    const shared = new SharedPolicy(store, options, name, member);
    shared.#install();
    try {
      shared.#unsubscribe = await store.subscribe(shared.#channel, () => void shared.#syncQuietly());
      // Join before the first read: a writer that lists the members after its write either sees this process or
      // this process's read sees its revision.
      await shared.#join();
      await shared.refresh();
      if (shared.#stored === undefined && options.initial !== undefined) {
        const initial = options.initial;
        await shared.#write('initial', (current) => (current === undefined ? initial : undefined));
      }
    } catch (err) {
      await shared.close();
      throw err;
    }
    shared.#heartbeat = setInterval(() => void shared.#syncQuietly(), Math.ceil(shared.#leaseMs / 3));
    shared.#heartbeat.unref();
    return shared;
  }

  /** The revision this process decides with (0 before any policy was published). */
  get version(): number {
    return this.#stored?.bundle.version ?? 0;
  }

  /** The policy of the revision this process holds (undefined before any was published). */
  get policy(): Policy | undefined {
    return this.#stored?.bundle.policy;
  }

  /** Whether this process refuses every call because it could not confirm its revision in time. */
  get fenced(): boolean {
    return this.#fenced || performance.now() >= this.#leaseUntil;
  }

  /**
   * Publishes `policy` as the next revision and returns it once every live process applied it. It is checked
   * first: a bad policy throws `PolicyError` and nothing is published. Throws `POLICY_NOT_APPLIED` naming the
   * processes that did not apply it within the bound (they refuse every call until they do).
   */
  async publish(policy: Policy): Promise<number> {
    const checked = parsePolicy(policy); // the schema checks all a set would: throws PolicyError naming the field
    return this.#write('publish', () => checked);
  }

  /**
   * Removes the rule `ruleId` from the shared policy, for every process, as one compare-and-set on the revision it
   * read: a concurrent write makes it read and try again, never lose the other write. Returns the new revision
   * once every live process applied it (see {@link publish}).
   */
  async revoke(ruleId: string): Promise<number> {
    return this.#write('revoke', (current) => {
      const rules = current?.policy.rules ?? [];
      if (!rules.some((r) => r.id === ruleId)) {
        throw new PolicyError(`The shared policy '${this.#name}' has no rule with id '${ruleId}'.`);
      }
      return { version: 1, rules: rules.filter((r) => r.id !== ruleId) };
    });
  }

  /** Reads the store, applies a newer revision, confirms the lease, and heartbeats. */
  refresh(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    // One sync at a time, and at most one queued behind it: a burst of broadcasts costs one more read.
    this.#queued ??= this.#syncing.then(() => {
      this.#queued = undefined;
      return this.#sync();
    });
    const run = this.#queued;
    this.#syncing = run.catch(() => {});
    return run;
  }

  /** Stops following the policy and leaves the members; the set then refuses every call. Safe to call twice. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#heartbeat);
    clearTimeout(this.#fenceTimer);
    this.#fenced = true;
    this.#install();
    await Promise.allSettled([this.#unsubscribe?.(), this.#store.removeMember(this.#group, this.member)]);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  get #channel(): string {
    return `policy:${this.#name}`;
  }

  get #bundleKey(): string {
    return `policy:${this.#name}:bundle`;
  }

  get #group(): string {
    return `policy:${this.#name}`;
  }

  #syncQuietly(): Promise<void> {
    return this.refresh().catch(this.#onError);
  }

  async #join(): Promise<void> {
    // The record outlives the lease: when it expires, the process's lease has expired before it.
    const record = memberText({ version: this.version, leaseMs: this.#leaseMs });
    await this.#store.putMember(this.#group, this.member, record, this.#leaseMs);
  }

  async #read(): Promise<StoredBundle | undefined> {
    const text = await this.#store.get(this.#bundleKey);
    return text === undefined ? undefined : parseBundle(text, this.#name);
  }

  /** One heartbeat: read, apply or restore, confirm the lease, then record the revision applied. */
  async #sync(): Promise<void> {
    if (this.#closed) return;
    // Join before the read that may confirm the lease: a writer that lists the members after its write then either
    // sees this process (and waits for it) or this read sees the write. A record that lapsed (an outage) and came
    // back after the writer listed the members could otherwise confirm a lease on the revision before the write.
    await this.#join();
    const started = performance.now();
    const held = this.#stored;
    const stored = await this.#read();
    if (stored === undefined) {
      // The store lost the bundle: write back the one held here, so the fleet keeps its newest revision.
      if (held !== undefined && (await this.#restore(undefined, held))) this.#confirm(started);
    } else if (stored.problem !== undefined) {
      this.#onError(stored.problem);
    } else if (held === undefined || stored.bundle.version > held.bundle.version) {
      this.#adopt(stored);
      if (this.#stored === stored) this.#confirm(started);
    } else if (sameRevision(stored.bundle, held.bundle)) {
      if (this.#stored === held) this.#confirm(started);
    } else if (stored.bundle.restored === true && stored.bundle.version < held.bundle.version) {
      // Another process restored an older revision than ours: the newest restore wins.
      if (this.#stored === held && (await this.#restore(stored.text, held))) this.#confirm(started);
    } else if (this.#stored === held) {
      const how = stored.bundle.version === held.bundle.version ? 'with other rules than' : 'below';
      this.#onError(
        new StateInvalidError(
          `The shared policy '${this.#name}' in the store is at revision ${stored.bundle.version}, ${how} revision ${held.bundle.version} applied here: revisions never go back, so it is not used, and this process refuses every call until a newer revision is published (interlock policy publish). Check who can write to the store.`,
        ),
      );
    }
    await this.#join();
  }

  /** Writes back the bundle held here, as a restore, where the store holds `expected`. */
  async #restore(expected: string | undefined, held: { bundle: Bundle }): Promise<boolean> {
    const restored: Bundle = { ...held.bundle, restored: true };
    const text = bundleText(restored);
    if (!(await this.#store.compareAndSet(this.#bundleKey, expected, text))) return false;
    this.#stored = { text, bundle: restored };
    return true;
  }

  /** Applies a newer revision read from (or written to) the store. */
  #adopt(stored: Stored): void {
    const before = this.version;
    if (stored.bundle.version < before) return;
    this.#stored = stored;
    if (stored.bundle.version === before) return;
    this.#install();
    this.#onUpdate?.(stored.bundle.version);
  }

  /** The store held this process's revision at `started`: decide with it until `started + lease - margin`. */
  #confirm(started: number): void {
    if (this.#closed) return;
    const until = started + this.#leaseMs - this.#margin;
    if (until <= this.#leaseUntil && !this.#fenced) return;
    this.#leaseUntil = Math.max(until, this.#leaseUntil);
    clearTimeout(this.#fenceTimer);
    this.#fenceTimer = setTimeout(() => this.#expire(), Math.max(0, this.#leaseUntil - performance.now()));
    this.#fenceTimer.unref();
    if (this.#fenced) {
      this.#fenced = false;
      this.#install();
    }
  }

  #expire(): void {
    if (this.#closed || this.#fenced) return;
    const left = this.#leaseUntil - performance.now();
    if (left > 0) {
      // Renewed meanwhile, or the timer fired early.
      this.#fenceTimer = setTimeout(() => this.#expire(), left);
      this.#fenceTimer.unref();
      return;
    }
    this.#fenced = true;
    this.#install();
    this.#onError(
      new StateUnavailableError(
        `The shared policy '${this.#name}' could not confirm revision ${this.version} in the store for ${this.#leaseMs} ms; this process refuses every call until it can. Check that the store is up.`,
      ),
    );
  }

  get #margin(): number {
    return marginOf(this.#leaseMs);
  }

  /**
   * Makes the capability set the revision held, or empty (every call refused) while fenced. Either way it gets a
   * deny rule per scheme whose condition is the lease itself, read at every decision: the moment the lease runs
   * out, every call is refused, even before the expiry timer runs (an event loop busy with I/O runs it late).
   */
  #install(): void {
    const label = `${this.#name}@${this.version}`;
    if (this.#fenced || this.#stored === undefined) {
      this.capabilities.replaceRules(EMPTY_POLICY, { policyRevision: `${label}:unconfirmed` });
    } else {
      this.capabilities.replaceRules(this.#stored.bundle.policy, { policyRevision: label });
    }
    const unconfirmed = () => this.fenced;
    for (const scheme of Object.keys(SCHEME_ACTIONS)) {
      this.capabilities.deny(`${scheme}:**`, '*', {
        description: `the shared policy '${this.#name}' is not confirmed in the store (fails closed)`,
        when: unconfirmed,
      });
    }
  }

  /**
   * The one write path: under the policy's lock, reads the bundle, computes the next policy from it (`change`
   * returns undefined for "nothing to write"), and compare-and-sets it; a lost race reads again. Then broadcasts
   * and waits for every live member to apply it.
   */
  async #write(
    mode: WriteMode,
    change: (current: Bundle | undefined) => Policy | undefined,
  ): Promise<number> {
    const written = await this.#store.withLock(`policy:${this.#name}`, async () => {
      for (let attempt = 0; attempt < 20; attempt++) {
        let stored = await this.#read();
        // Empty, or refilled by restores after a loss: wait until every live process had its chance to restore.
        if (stored === undefined || stored.bundle?.restored === true) stored = await this.#awaitRestore();
        if (stored?.problem !== undefined) {
          // A revoke needs the rules it removes one from; a publish replaces the bundle whole.
          if (mode === 'initial') return undefined;
          if (mode === 'revoke') throw stored.problem;
        }
        const policy = change(stored?.bundle);
        if (policy === undefined) return undefined;
        const members = await this.#store.members(this.#group);
        let highest = Math.max(stored?.bundle?.version ?? 0, this.version);
        for (const text of members.values()) highest = Math.max(highest, parseMember(text)?.version ?? 0);
        if (highest >= MAX_POLICY_VERSION) {
          throw new StateInvalidError(
            `The shared policy '${this.#name}' is at revision ${highest}, the highest there can be. Check who can write to the store, then delete the policy's keys and publish again.`,
          );
        }
        const text = bundleText({ version: highest + 1, policy });
        const started = performance.now();
        if (await this.#store.compareAndSet(this.#bundleKey, stored?.text, text)) {
          // Kept as any process will read it back.
          const { bundle } = parseBundle(text, this.#name);
          if (bundle === undefined)
            throw new PolicyError(`The shared policy '${this.#name}' did not read back.`);
          this.#adopt({ text, bundle });
          this.#confirm(started);
          return bundle.version;
        }
      }
      throw new StateUnavailableError(
        `The shared policy '${this.#name}' kept changing while it was being written; try again.`,
      );
    });
    if (written === undefined) {
      await this.refresh();
      return this.version;
    }
    const wroteAt = performance.now();
    await this.#join();
    await this.#store.publish(this.#channel, String(written));
    await this.#awaitApplied(written, wroteAt);
    return written;
  }

  /**
   * The store holds no bundle: it may have lost its data. Every live process writes back the revision it holds
   * within one lease (and one whose lease ran out refuses every call), so wait a lease for the newest to return.
   */
  async #awaitRestore(): Promise<StoredBundle | undefined> {
    const deadline = performance.now() + this.#leaseMs + this.#margin;
    for (let pause = 20; performance.now() < deadline; pause = Math.min(pause * 2, 200)) {
      await delay(Math.min(pause, Math.max(1, deadline - performance.now())));
    }
    return this.#read();
  }

  /**
   * Resolves once every live member applied `version`; throws `POLICY_NOT_APPLIED` naming those that did not
   * within the longest lease among the members (plus a margin): by then each of those has refused every call.
   */
  async #awaitApplied(version: number, wroteAt: number): Promise<void> {
    let leaseMs = this.#leaseMs;
    for (let pause = 2; ; pause = Math.min(pause * 2, 100)) {
      const members = await this.#store.members(this.#group);
      const pending: string[] = [];
      for (const [member, text] of members) {
        const record = parseMember(text);
        leaseMs = Math.max(leaseMs, record?.leaseMs ?? 0);
        if ((record?.version ?? 0) < version) pending.push(member);
      }
      if (pending.length === 0) return;
      const bound = leaseMs + marginOf(leaseMs);
      if (performance.now() >= wroteAt + bound) {
        pending.sort();
        throw new PolicyNotAppliedError(
          `Revision ${version} of the shared policy '${this.#name}' is in the store, but ${pending.length} live process${pending.length === 1 ? '' : 'es'} did not apply it within ${bound} ms: ${pending.join(', ')}. They refuse every call until they do; check their connection to the store.`,
          { version, pending },
        );
      }
      await delay(pause);
    }
  }
}
