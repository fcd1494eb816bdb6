/**
 * `Engine` (issue 4): the composition root. It binds the manager factory, capability sets, audit, tracer,
 * logger, model providers and clock once (see `container.ts`), creates agents from them, and closes them all.
 */
import { z } from 'zod';
import { ClosedError, ConfigError } from '../errors.js';
import type { HttpClient } from '../net/http.js';
import { parseOptions } from '../providers/options.js';
import { Agent } from './agent.js';
import type { AgentFactory } from './agent-factory.js';
import { composeEngine } from './container.js';
import { FleetBinding } from './fleet.js';
import type { AgentOptions, EngineOptions } from './types.js';

const EngineOptionsSchema = z.object({
  maxTurns: z.number().int().min(1).max(1000).optional(),
  maxParallelToolCalls: z.number().int().min(1).max(1000).optional(),
  auditFailure: z.enum(['block', 'continue']).optional(),
  defaultModel: z.union([z.string().min(1), z.object({ generate: z.any() }).loose()]).optional(),
});

/** Creates agents over MCP servers, with capability-gated tools, telemetry and model providers. */
export class Engine implements AsyncDisposable {
  readonly #factory: AgentFactory;
  readonly #http: HttpClient;
  readonly #agents = new Set<Agent>();
  readonly #fleet: FleetBinding | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: EngineOptions = {}) {
    parseOptions(EngineOptionsSchema, options, 'Engine');
    const misplaced = (['fetch', 'network', 'http', 'httpClient'] as const).filter(
      (k) => (options.managerOptions as Record<string, unknown> | undefined)?.[k] !== undefined,
    );
    if (misplaced.length > 0)
      throw new ConfigError(
        `Invalid Engine options: managerOptions.${misplaced[0]} belongs on the Engine itself (new Engine({ ${misplaced[0] === 'httpClient' ? 'network, http' : misplaced[0]} })): one HTTP stack serves every agent.`,
        { issues: misplaced.map((k) => ({ path: `managerOptions.${k}`, message: 'set it on the Engine' })) },
      );
    this.#fleet =
      options.state === undefined ? undefined : new FleetBinding(options.state, options.clock ?? Date.now);
    const { factory, http } = composeEngine({ ...options }, this.#fleet);
    this.#factory = factory;
    this.#http = http;
  }

  /**
   * Creates an agent and connects its servers in parallel. A server that fails to connect leaves the agent
   * without its tools (see `agent.servers`) unless `requireAllServers` is set. Throws `ConfigError` or
   * `PolicyError` for bad options, before anything is started.
   */
  async createAgent(options: AgentOptions): Promise<Agent> {
    this.#assertOpen();
    for (const a of this.#agents) if (a.closed) this.#agents.delete(a);
    // A fleet's pins and shared policies are loaded from the store before the first agent connects anything.
    await this.#fleet?.open();
    this.#assertOpen();
    const session = this.#factory.create(options);
    const agent = new Agent(session);
    this.#agents.add(agent);
    try {
      await this.#factory.start(session, options);
      this.#assertOpen();
    } catch (err) {
      this.#agents.delete(agent);
      await agent.close();
      throw err;
    }
    return agent;
  }

  /**
   * The engine's HTTP stack: one guarded keep-alive dispatcher (proxy, certificates, SSRF guard) shared by every
   * agent's HTTP servers and OAuth requests, and by model providers that take `withDispatcher`. Give
   * `engine.http.dispatcher` to other undici clients to put them on the same stack.
   */
  get http(): HttpClient {
    return this.#http;
  }

  /** The agents created and not yet closed (sub-agents are reached through their parents). */
  get agents(): Agent[] {
    return [...this.#agents].filter((a) => !a.closed);
  }

  /** Closes every agent (and so every server process) and the HTTP stack; later `createAgent` calls reject. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.allSettled([...this.#agents].map((a) => a.close()));
      this.#agents.clear();
      await this.#fleet?.close();
      await this.#http.close();
    })();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #assertOpen(): void {
    if (this.#closing !== undefined) throw new ClosedError('This Engine is closed; create a new one.');
  }
}
