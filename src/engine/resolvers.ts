/** The default resolvers of an agent's `capabilities` and `model` options. Plain functions; no container here. */
import type { Dispatcher } from 'undici';
import { ConfigError } from '../errors.js';
import type { Logger } from '../interop/logger.js';
import type { ModelProvider } from '../providers/types.js';
import { CapabilitySet } from '../security/capability-set.js';
import { parsePolicy } from '../security/policy.js';
import type { QuotaCounter } from '../security/types.js';
import type { CapabilityResolver, CapabilitySpec, ModelResolver } from './types.js';

/**
 * Sets are used as given (live: a revoke reaches the agent at once); policy objects are checked once here and
 * parsed into a fresh set per agent, so `maxCalls` quotas are never shared by accident.
 */
export function capabilityResolver(
  named: Readonly<Record<string, CapabilitySet | Readonly<Record<string, unknown>>>> = {},
  clock: () => number,
  logger: Logger,
  fleet: {
    /** Counts the quotas of sets parsed from policies (a fleet's store). */
    quotaCounter?: QuotaCounter | undefined;
    /** Shared policies by name, looked up after `named`. */
    shared?: ((name: string) => CapabilitySet | undefined) | undefined;
    sharedNames?: readonly string[] | undefined;
  } = {},
): CapabilityResolver {
  const sets = new Map<string, CapabilitySet | Readonly<Record<string, unknown>>>();
  for (const [name, value] of Object.entries(named)) {
    if (!(value instanceof CapabilitySet)) parsePolicy(value); // throws PolicyError naming the bad rule now
    sets.set(name, value);
  }
  const fromSpec = (spec: CapabilitySpec, agent: string): CapabilitySet => {
    if (spec instanceof CapabilitySet) return spec;
    if (typeof spec === 'string') {
      const found = sets.get(spec) ?? fleet.shared?.(spec);
      if (found === undefined) {
        const known =
          [...sets.keys(), ...(fleet.sharedNames ?? [])].map((k) => `'${k}'`).join(', ') || 'none';
        throw new ConfigError(
          `Agent '${agent}' asks for the capability set '${spec}', which the engine does not have (known: ${known}). Add it to capabilitySets.`,
          { issues: [{ path: 'capabilities', message: `unknown capability set '${spec}'` }] },
        );
      }
      return fromSpec(found, agent);
    }
    // `{ cedar: TEXT }`: a Cedar policy, validated against Interlock's Cedar schema (issue 40).
    if (typeof spec.cedar === 'string' && Object.keys(spec).length === 1) {
      return CapabilitySet.fromCedar(spec.cedar, { clock, quotaCounter: fleet.quotaCounter });
    }
    return CapabilitySet.fromPolicy(spec, { clock, quotaCounter: fleet.quotaCounter });
  };
  return (spec, agent) => {
    if (spec === undefined) {
      logger.info(`agent '${agent}' has no capabilities: every tool call will be denied`);
      return new CapabilitySet({ clock, quotaCounter: fleet.quotaCounter });
    }
    return fromSpec(spec, agent);
  };
}

/**
 * Names are looked up in the engine's `models`; none means `defaultModel`. A provider that can take a dispatcher
 * (`withDispatcher`) and was given none of its own is moved onto the engine's guarded one, once per provider.
 */
export function modelResolver(
  models: Readonly<Record<string, ModelProvider>> = {},
  defaultModel: ModelProvider | string | undefined,
  dispatcher?: Dispatcher | undefined,
): ModelResolver {
  const byName = new Map(Object.entries(models));
  const bound = new WeakMap<ModelProvider, ModelProvider>();
  const onStack = (provider: ModelProvider): ModelProvider => {
    if (dispatcher === undefined || provider.withDispatcher === undefined) return provider;
    let b = bound.get(provider);
    if (b === undefined) {
      b = provider.withDispatcher(dispatcher);
      bound.set(provider, b);
    }
    return b;
  };
  const lookup = (name: string, agent: string): ModelProvider => {
    const found = byName.get(name);
    if (found !== undefined) return found;
    const known = [...byName.keys()].map((k) => `'${k}'`).join(', ') || 'none';
    throw new ConfigError(
      `Agent '${agent}' asks for the model '${name}', which the engine does not have (known: ${known}). Add it to models.`,
      { issues: [{ path: 'model', message: `unknown model '${name}'` }] },
    );
  };
  return (spec, agent) => {
    const chosen = spec ?? defaultModel;
    if (chosen === undefined) {
      throw new ConfigError(
        `Agent '${agent}' has no model: pass model to createAgent, or defaultModel to the Engine.`,
        { issues: [{ path: 'model', message: 'required' }] },
      );
    }
    return onStack(typeof chosen === 'string' ? lookup(chosen, agent) : chosen);
  };
}
