/**
 * `Engine` (issue 4): the composition root. It binds the manager factory, capability sets, audit, tracer,
 * logger, model providers and clock once (see `container.ts`), creates agents from them, and closes them all.
 */
import { z } from 'zod';
import { ClosedError } from '../errors.js';
import { parseOptions } from '../providers/options.js';
import { Agent } from './agent.js';
import type { AgentFactory } from './agent-factory.js';
import { composeEngine } from './container.js';
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
  readonly #agents = new Set<Agent>();
  #closing: Promise<void> | undefined;

  constructor(options: EngineOptions = {}) {
    parseOptions(EngineOptionsSchema, options, 'Engine');
    this.#factory = composeEngine({ ...options });
  }

  /**
   * Creates an agent and connects its servers in parallel. A server that fails to connect leaves the agent
   * without its tools (see `agent.servers`) unless `requireAllServers` is set. Throws `ConfigError` or
   * `PolicyError` for bad options, before anything is started.
   */
  async createAgent(options: AgentOptions): Promise<Agent> {
    this.#assertOpen();
    for (const a of this.#agents) if (a.closed) this.#agents.delete(a);
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

  /** The agents created and not yet closed (sub-agents are reached through their parents). */
  get agents(): Agent[] {
    return [...this.#agents].filter((a) => !a.closed);
  }

  /** Closes every agent (and so every server process); later `createAgent` calls reject. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.allSettled([...this.#agents].map((a) => a.close()));
      this.#agents.clear();
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
