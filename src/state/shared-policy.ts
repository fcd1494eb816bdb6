/**
 * One policy for a fleet (issue 16): versioned bundles in the state store, and a broadcast on every change, so a
 * revoke or an update in one process reaches the capability set of every other process. Each process keeps a
 * `CapabilitySet` in sync; its revision moves on every update, so calls still waiting to be sent are decided
 * again. Audit records carry the bundle version that decided.
 */
import { PolicyError } from '../errors.js';
import { CapabilitySet, type CapabilitySetOptions } from '../security/capability-set.js';
import { type Policy, parsePolicy } from '../security/policy.js';
import type { StateStore } from './types.js';

/** How often a process also reads the version, in case it missed a broadcast (a reconnect). */
export const DEFAULT_POLICY_POLL_MS = 5_000;

/** Options of {@link SharedPolicy.open}. */
export interface SharedPolicyOptions {
  /** The policy's name in the store: processes share a policy by name. @default 'default' */
  name?: string | undefined;
  /** Published as version 1 when the store holds no policy of that name yet. */
  initial?: Policy | undefined;
  /** Options of the capability set kept in sync (its clock, a quota counter...). */
  capabilities?: CapabilitySetOptions | undefined;
  /** How often the version is read as a safety net besides the broadcast; 0 turns it off. @default 5 000 ms */
  pollMs?: number | undefined;
  /** Told when an update could not be applied (the set keeps its last good rules). */
  onError?: ((error: unknown) => void) | undefined;
  /** Told after a new version was applied to the set. */
  onUpdate?: ((version: number) => void) | undefined;
}

interface Bundle {
  version: number;
  policy: Policy;
}

/** A policy shared through a {@link StateStore}. Create it with {@link SharedPolicy.open}. */
export class SharedPolicy implements AsyncDisposable {
  /** The set this process decides with: give it to the manager or the engine. */
  readonly capabilities: CapabilitySet;
  readonly #store: StateStore;
  readonly #name: string;
  readonly #onError: (error: unknown) => void;
  #onUpdate: ((version: number) => void) | undefined;
  #version = 0;
  #unsubscribe: (() => Promise<void>) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  private constructor(
    store: StateStore,
    name: string,
    capabilities: CapabilitySet,
    onError: (e: unknown) => void,
  ) {
    this.#store = store;
    this.#name = name;
    this.capabilities = capabilities;
    this.#onError = onError;
  }

  /** Loads the current version (publishing `initial` if there is none) and follows every later one. */
  static async open(store: StateStore, options: SharedPolicyOptions = {}): Promise<SharedPolicy> {
    const name = options.name ?? 'default';
    const shared = new SharedPolicy(
      store,
      name,
      new CapabilitySet(options.capabilities),
      options.onError ?? (() => {}),
    );
    shared.#onUpdate = options.onUpdate;
    shared.#unsubscribe = await store.subscribe(
      shared.#channel,
      () => void shared.refresh().catch(shared.#onError),
    );
    const current = await shared.#read();
    if (current !== undefined) shared.#apply(current);
    else if (options.initial !== undefined) await shared.publish(options.initial);
    const pollMs = options.pollMs ?? DEFAULT_POLICY_POLL_MS;
    if (pollMs > 0) {
      shared.#timer = setInterval(() => void shared.refresh().catch(shared.#onError), pollMs);
      shared.#timer.unref();
    }
    return shared;
  }

  /** The version this process decides with (0 before any policy was published). */
  get version(): number {
    return this.#version;
  }

  /**
   * Publishes `policy` as the next version for every process. It is checked first: a bad policy throws
   * `PolicyError` and nothing is published. Returns the new version.
   */
  async publish(policy: Policy): Promise<number> {
    const checked = parsePolicy(policy); // the schema checks all a set would: throws PolicyError naming the field
    const bundle = await this.#store.withLock(`policy:${this.#name}`, async () => {
      const current = await this.#read();
      // Versions only grow, even when the store lost the bundle (a Redis restart without persistence): a lower
      // version would be ignored by every process that applied a higher one.
      const next: Bundle = { version: Math.max(current?.version ?? 0, this.#version) + 1, policy: checked };
      await this.#store.set(this.#bundleKey, JSON.stringify(next));
      return next;
    });
    this.#apply(bundle);
    await this.#store.publish(this.#channel, String(bundle.version));
    return bundle.version;
  }

  /** Removes the rule `ruleId` from the shared policy, for every process. Returns the new version. */
  async revoke(ruleId: string): Promise<number> {
    const current = await this.#read();
    const rules = current?.policy.rules ?? [];
    if (!rules.some((r) => r.id === ruleId)) {
      throw new PolicyError(`The shared policy '${this.#name}' has no rule with id '${ruleId}'.`);
    }
    return this.publish({ version: 1, rules: rules.filter((r) => r.id !== ruleId) });
  }

  /** Reads the version in the store and applies it if it is newer than this process's. */
  async refresh(): Promise<void> {
    if (this.#closed) return;
    const current = await this.#read();
    if (current !== undefined && current.version > this.#version) this.#apply(current);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    await this.#unsubscribe?.().catch(() => undefined);
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

  async #read(): Promise<Bundle | undefined> {
    const text = await this.#store.get(this.#bundleKey);
    return text === undefined ? undefined : (JSON.parse(text) as Bundle);
  }

  #apply(bundle: Bundle): void {
    if (bundle.version <= this.#version) return;
    this.capabilities.replaceRules(bundle.policy, { policyRevision: `${this.#name}@${bundle.version}` });
    this.#version = bundle.version;
    this.#onUpdate?.(bundle.version);
  }
}
