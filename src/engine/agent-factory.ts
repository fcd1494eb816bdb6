/**
 * Builds agents from the engine's bindings. A plain class: it receives what it needs in its constructor and
 * never sees the container.
 */
import { context, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import { z } from 'zod';
import { ConnectionError, InterlockError } from '../errors.js';
import type { Logger } from '../interop/logger.js';
import type { MCPClientManagerOptions } from '../interop/manager.js';
import type { HttpClient } from '../net/http.js';
import { parseOptions } from '../providers/options.js';
import { AGENT_NAME_RE, AgentSession } from '../session/agent-session.js';
import { ATTR, SPAN } from '../session/telemetry.js';
import {
  type AgentOptions,
  type AuditSettings,
  type CapabilityResolver,
  type EngineDefaults,
  type ManagerFactory,
  type ModelResolver,
  SERVER_REQUEST_OPTION_KEYS,
} from './types.js';

/** What an {@link AgentFactory} is built from: one field per binding. */
export interface AgentFactoryDependencies {
  createManager: ManagerFactory;
  resolveCapabilities: CapabilityResolver;
  resolveModel: ModelResolver;
  audit: AuditSettings;
  tracer: Tracer;
  logger: Logger;
  clock: () => number;
  defaults: EngineDefaults;
  /** The engine's HTTP stack, given to every manager. */
  http: HttpClient;
}

const AgentOptionsSchema = z.object({
  name: z.string().regex(AGENT_NAME_RE, "must be 1-64 characters of A-Z, a-z, 0-9, '_', '.' and '-'"),
  mcpServers: z.union([z.string().min(1), z.array(z.unknown())]).optional(),
  tools: z
    .array(
      z.custom<object>(
        (v) => typeof (v as { invoke?: unknown } | null)?.invoke === 'function',
        'must be a tool made with defineTool',
      ),
    )
    .optional(),
  instructions: z.string().optional(),
  maxTurns: z.number().int().min(1).max(1000).optional(),
  maxParallelToolCalls: z.number().int().min(1).max(1000).optional(),
  requireAllServers: z.boolean().optional(),
  toolResults: z.enum(['text', 'content']).optional(),
});

/** The handlers for server requests this agent set; what it leaves out keeps the engine's default. */
function serverRequestOptions(options: AgentOptions): Partial<MCPClientManagerOptions> {
  const out: Record<string, unknown> = {};
  for (const key of SERVER_REQUEST_OPTION_KEYS) if (options[key] !== undefined) out[key] = options[key];
  return out as Partial<MCPClientManagerOptions>;
}

/** Creates and starts agent sessions. */
export class AgentFactory {
  readonly #d: AgentFactoryDependencies;

  constructor(dependencies: AgentFactoryDependencies) {
    this.#d = dependencies;
  }

  /** A new, not yet started session for `options`. Throws `ConfigError` / `PolicyError` for bad options. */
  create(options: AgentOptions): AgentSession {
    parseOptions(AgentOptionsSchema, options, 'createAgent');
    const d = this.#d;
    return new AgentSession({
      name: options.name,
      model: d.resolveModel(options.model, options.name),
      capabilities: d.resolveCapabilities(options.capabilities, options.name),
      tools: options.tools,
      instructions: options.instructions,
      maxTurns: options.maxTurns ?? d.defaults.maxTurns,
      maxParallelToolCalls: options.maxParallelToolCalls ?? d.defaults.maxParallelToolCalls,
      toolResults: options.toolResults,
      interop: {
        mcpServers: options.mcpServers,
        loadOptions: options.loadOptions,
        createManager: d.createManager,
        managerOptions: {
          ...d.defaults.managerOptions,
          ...serverRequestOptions(options),
          httpClient: d.http,
          // Issue 42: each agent's manager has its own flow state, never one shared through the defaults.
          flow: undefined,
        },
      },
      audit: d.audit.audit,
      approver: d.audit.approver,
      auditFailure: d.audit.auditFailure,
      tracer: d.tracer,
      logger: d.logger,
      clock: d.clock,
    });
  }

  /** Starts `session` (its servers connect in parallel) inside a `create_agent` span. */
  async start(session: AgentSession, options: AgentOptions): Promise<void> {
    const { tracer } = this.#d;
    const span = tracer.startSpan(
      SPAN.create(session.name),
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          [ATTR.OPERATION]: 'create_agent',
          [ATTR.AGENT_NAME]: session.name,
          [ATTR.PROVIDER]: session.model.name,
          [ATTR.REQUEST_MODEL]: session.model.model,
        },
      },
      context.active(),
    );
    try {
      await context.with(trace.setSpan(context.active(), span), () => session.start());
      const servers = session.servers;
      const failed = Object.keys(servers).filter((name) => !servers[name]);
      span.setAttribute('interlock.servers.connected', Object.keys(servers).length - failed.length);
      span.setAttribute('interlock.servers.failed', failed.length);
      if (failed.length > 0 && options.requireAllServers === true) {
        const why = failed
          .map((name) => `'${name}' (${session.mcp.getConnection(name)?.error?.message ?? 'unknown error'})`)
          .join(', ');
        throw new ConnectionError(
          `Agent '${session.name}' requires all its servers, and ${failed.length} did not connect: ${why}.`,
          { server: failed[0] },
        );
      }
      span.end();
    } catch (err) {
      span.setAttribute(ATTR.ERROR_TYPE, err instanceof InterlockError ? err.code : 'Error');
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: err instanceof Error ? err.message : String(err),
      });
      span.end();
      throw err;
    }
  }
}
