/**
 * The composition root: every binding of the engine, in one place (issue 4). Each `EngineOptions` field
 * replaces one binding; classes stay plain and receive their dependencies in their constructors. This is the
 * only module that resolves anything from the container.
 */
import { trace } from '@opentelemetry/api';
import { Container } from 'inversify';
import { silentLogger } from '../interop/logger.js';
import { CLIENT_VERSION, MCPClientManager } from '../interop/manager.js';
import { type HttpClient, httpClientFrom } from '../net/http.js';
import { TRACER_NAME } from '../session/telemetry.js';
import { AgentFactory } from './agent-factory.js';
import type { FleetBinding } from './fleet.js';
import { capabilityResolver, modelResolver } from './resolvers.js';
import { TOKENS } from './tokens.js';
import type { EngineOptions, ManagerFactory } from './types.js';

const defaultManagerFactory: ManagerFactory = (options) => new MCPClientManager(options);

/** What the engine holds: the agent factory, and the HTTP stack it closes last. */
export interface ComposedEngine {
  factory: AgentFactory;
  http: HttpClient;
}

/** Binds everything `options` leaves to defaults, and resolves the agent factory. */
export function composeEngine(options: EngineOptions, fleet?: FleetBinding): ComposedEngine {
  const c = new Container({ defaultScope: 'Singleton' });
  // The engine's own stack (it closes it last); every agent's manager gets it as `httpClient`.
  c.bind(TOKENS.Http).toConstantValue(httpClientFrom(options).client);
  c.bind(TOKENS.ManagerFactory).toConstantValue(options.createManager ?? defaultManagerFactory);
  c.bind(TOKENS.Tracer).toConstantValue(options.tracer ?? trace.getTracer(TRACER_NAME, CLIENT_VERSION));
  c.bind(TOKENS.Logger).toConstantValue(options.logger ?? silentLogger);
  c.bind(TOKENS.Clock).toConstantValue(options.clock ?? Date.now);
  c.bind(TOKENS.Audit).toConstantValue(
    Object.freeze({ audit: options.audit, approver: options.approver, auditFailure: options.auditFailure }),
  );
  c.bind(TOKENS.Models).toDynamicValue((ctx) =>
    modelResolver(options.models, options.defaultModel, ctx.get(TOKENS.Http).dispatcher),
  );
  c.bind(TOKENS.Capabilities).toDynamicValue(
    (ctx) =>
      options.resolveCapabilities ??
      capabilityResolver(options.capabilitySets, ctx.get(TOKENS.Clock), ctx.get(TOKENS.Logger), {
        quotaCounter: fleet?.quotaCounter,
        shared: (name) => fleet?.policySet(name),
        sharedNames: fleet?.policyNames,
      }),
  );
  c.bind(TOKENS.Defaults).toConstantValue(
    Object.freeze({
      maxTurns: options.maxTurns,
      maxParallelToolCalls: options.maxParallelToolCalls,
      // A fleet's store, pins, tokens and principal are defaults; the engine's own managerOptions win.
      managerOptions:
        fleet === undefined
          ? options.managerOptions
          : { ...fleet.managerOptions(), ...options.managerOptions },
    }),
  );
  c.bind(TOKENS.AgentFactory).toDynamicValue(
    (ctx) =>
      new AgentFactory({
        createManager: ctx.get(TOKENS.ManagerFactory),
        resolveCapabilities: ctx.get(TOKENS.Capabilities),
        resolveModel: ctx.get(TOKENS.Models),
        audit: ctx.get(TOKENS.Audit),
        tracer: ctx.get(TOKENS.Tracer),
        logger: ctx.get(TOKENS.Logger),
        clock: ctx.get(TOKENS.Clock),
        defaults: ctx.get(TOKENS.Defaults),
        http: ctx.get(TOKENS.Http),
      }),
  );
  return { factory: c.get(TOKENS.AgentFactory), http: c.get(TOKENS.Http) };
}
