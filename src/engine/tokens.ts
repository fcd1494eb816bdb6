/**
 * The engine's service identifiers: one place that lists everything the composition root binds (issue 4,
 * "the manager factory, capability sets, audit sink, tracer, logger, model providers and clock are bound in
 * one place"). Internal: neither the tokens nor the container appear in the public API; users replace a
 * binding through `EngineOptions`.
 */
import type { Tracer } from '@opentelemetry/api';
import type { ServiceIdentifier } from 'inversify';
import type { Logger } from '../interop/logger.js';
import type { HttpClient } from '../net/http.js';
import type { AgentFactory } from './agent-factory.js';
import type {
  AuditSettings,
  CapabilityResolver,
  EngineDefaults,
  ManagerFactory,
  ModelResolver,
} from './types.js';

function token<T>(name: string): ServiceIdentifier<T> {
  return Symbol(`interlock.${name}`) as ServiceIdentifier<T>;
}

/** Every binding of the engine's container. */
export const TOKENS = Object.freeze({
  /** Creates each root agent's `MCPClientManager`. */
  ManagerFactory: token<ManagerFactory>('ManagerFactory'),
  /** Turns an agent's `capabilities` option into its `CapabilitySet`. */
  Capabilities: token<CapabilityResolver>('Capabilities'),
  /** Audit sink, approver and audit-failure mode shared by every agent. */
  Audit: token<AuditSettings>('Audit'),
  Tracer: token<Tracer>('Tracer'),
  Logger: token<Logger>('Logger'),
  /** Turns an agent's `model` option into a `ModelProvider`. */
  Models: token<ModelResolver>('Models'),
  /** The one HTTP stack (guarded dispatcher, proxy, certificates) of every manager and model provider. */
  Http: token<HttpClient>('Http'),
  /** Ms since the epoch: audit records, rule expiry. */
  Clock: token<() => number>('Clock'),
  /** Defaults of agents (turns, parallel calls, manager options). */
  Defaults: token<EngineDefaults>('Defaults'),
  /** Builds and starts agents from the bindings above. */
  AgentFactory: token<AgentFactory>('AgentFactory'),
});
