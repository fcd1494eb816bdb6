/**
 * The engine's fleet binding (issue 16): one state store and one principal handed to every agent. Quotas of sets
 * parsed from policies count in the store (with the chosen fallback), tool pins and OAuth tokens are shared through
 * it, and named shared policies become capability sets that follow every published version.
 */
import { createServerAuth } from '../auth/server-auth.js';
import { StateTokenStore } from '../auth/token-store.js';
import { ConfigError } from '../errors.js';
import type { CapabilitySet } from '../security/capability-set.js';
import { PinStore } from '../security/pinning.js';
import { checkQuotaFallback, FleetQuotaCounter } from '../state/quota-counter.js';
import { SharedPins } from '../state/shared-pins.js';
import { SharedPolicy } from '../state/shared-policy.js';
import { describeIssues } from '../zod-issues.js';
import type { EngineManagerOptions, EngineStateOptions } from './types.js';

// Letters, digits, punctuation and symbols: no spaces or control characters (a principal ends up in keys and logs).
const PRINCIPAL_RE = /^[\p{L}\p{N}\p{P}\p{S}]{1,256}$/u;
const POLICY_NAME_RE = /^[A-Za-z0-9_.:-]{1,128}$/;

/** What the engine shares between its agents through a state store. */
export class FleetBinding {
  readonly quotaCounter: FleetQuotaCounter;
  readonly #options: EngineStateOptions;
  readonly #pins: PinStore | undefined;
  readonly #policies = new Map<string, SharedPolicy>();
  #sharedPins: SharedPins | undefined;
  #ready: Promise<void> | undefined;
  #closed = false;

  constructor(options: EngineStateOptions, clock: () => number) {
    const issues: { path: string; message: string }[] = [];
    if (typeof options.store?.consume !== 'function') {
      issues.push({ path: 'state.store', message: 'a StateStore (RedisStateStore.connect(...))' });
    }
    if (options.principal !== undefined && !PRINCIPAL_RE.test(options.principal)) {
      issues.push({ path: 'state.principal', message: '1-256 characters, no spaces or control characters' });
    }
    for (const [i, name] of (options.policies ?? []).entries()) {
      if (!POLICY_NAME_RE.test(name)) {
        issues.push({ path: `state.policies[${i}]`, message: "1-128 characters of A-Z, a-z, 0-9, '_.:-'" });
      }
    }
    if (issues.length > 0) {
      throw new ConfigError(`Invalid Engine options: ${describeIssues(issues)}.`, { issues });
    }
    this.#options = options;
    this.quotaCounter = new FleetQuotaCounter(options.store, {
      onUnavailable: checkQuotaFallback(options.quotaFallback, 'state.quotaFallback'),
      clock,
      lease: options.quotaLease,
    });
    // Filled from the store by `open()`, before any agent's manager connects.
    this.#pins = options.pins === false ? undefined : new PinStore();
  }

  /** The shared policy names, which become capability set names. */
  get policyNames(): readonly string[] {
    return this.#options.policies ?? [];
  }

  /** Loads the shared pins and policies once; later calls wait for the same load. */
  open(): Promise<void> {
    this.#ready ??= (async () => {
      const { store } = this.#options;
      try {
        if (this.#pins !== undefined) this.#sharedPins = await SharedPins.open(store, { pins: this.#pins });
        for (const name of this.policyNames) {
          this.#policies.set(
            name,
            await SharedPolicy.open(store, { name, capabilities: { quotaCounter: this.quotaCounter } }),
          );
        }
      } catch (err) {
        // The store was down: undo what opened, so the next createAgent tries again.
        await this.#closeShared();
        this.#ready = undefined;
        throw err;
      }
    })();
    return this.#ready;
  }

  /** The capability set of the shared policy `name`, once opened. */
  policySet(name: string): CapabilitySet | undefined {
    return this.#policies.get(name)?.capabilities;
  }

  /** Manager options every agent gets from the fleet; the engine's `managerOptions` override them. */
  managerOptions(): EngineManagerOptions {
    const { principal, tokens, store } = this.#options;
    return {
      ...(principal === undefined ? {} : { principal }),
      ...(this.#pins === undefined ? {} : { pins: this.#pins }),
      ...(tokens === false ? {} : { serverAuth: createServerAuth({ store: new StateTokenStore(store) }) }),
    };
  }

  /** Stops following pins and policies, and gives leased quota units back. The store stays open: its owner closes it. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#ready?.catch(() => undefined);
    await this.#closeShared();
    await this.quotaCounter.close();
  }

  async #closeShared(): Promise<void> {
    const policies = [...this.#policies.values()];
    this.#policies.clear();
    const pins = this.#sharedPins;
    this.#sharedPins = undefined;
    await Promise.allSettled([pins?.close(), ...policies.map((p) => p.close())]);
  }
}
