/** The engine's options and the shapes of what it binds. */

import type { FetchLike } from '@modelcontextprotocol/client';
import type { Tracer } from '@opentelemetry/api';
import type { LoadMCPConfigOptions } from '../config/mcp-json.js';
import type { MCPServerConfigInput } from '../config/servers.js';
import type { Logger } from '../interop/logger.js';
import type { MCPClientManager, MCPClientManagerOptions } from '../interop/manager.js';
import type {
  ElicitationHandler,
  RootsOption,
  SamplingHandler,
  UrlElicitationHandler,
} from '../interop/server-requests.js';
import type { HttpOptions } from '../net/http.js';
import type { NetworkPolicy } from '../net/network.js';
import type { ModelProvider } from '../providers/types.js';
import type { CapabilitySet } from '../security/capability-set.js';
import type { AuditFailureMode } from '../security/gate.js';
import type { Approver, AuditSink } from '../security/types.js';
import type { NativeTool } from '../session/native-tool.js';
import type { FleetQuotaCounterOptions, QuotaFallback } from '../state/quota-counter.js';
import type { StateStore } from '../state/types.js';

/**
 * Creates a manager; the engine passes the agent's capabilities, audit, approver, agent name, tracer and its shared
 * `httpClient`.
 */
export type ManagerFactory = (options: MCPClientManagerOptions) => MCPClientManager;

/**
 * What an agent's `capabilities` may be: a `CapabilitySet` (used as is, live), a policy object (parsed into a
 * new set for this agent), `{ cedar: TEXT }` (a Cedar policy, validated at load), or the name of a set or policy
 * given to the engine in `capabilitySets`.
 */
export type CapabilitySpec = CapabilitySet | Readonly<Record<string, unknown>> | string;

/** Turns an agent's `capabilities` option into its set. */
export type CapabilityResolver = (spec: CapabilitySpec | undefined, agent: string) => CapabilitySet;

/** Turns an agent's `model` option into a provider. */
export type ModelResolver = (spec: ModelProvider | string | undefined, agent: string) => ModelProvider;

/** Audit settings shared by every agent of an engine. */
export interface AuditSettings {
  readonly audit?: AuditSink | undefined;
  readonly approver?: Approver | undefined;
  readonly auditFailure?: AuditFailureMode | undefined;
}

/**
 * Manager options every agent gets; the engine sets the rest per agent. HTTP settings (`fetch`, `network`, `http`)
 * are the engine's own options: one HTTP stack serves every agent. Each agent has a flow state of its own.
 */
export type EngineManagerOptions = Omit<
  MCPClientManagerOptions,
  | 'capabilities'
  | 'audit'
  | 'approver'
  | 'auditFailure'
  | 'agent'
  | 'flow'
  | 'logger'
  | 'fetch'
  | 'network'
  | 'http'
  | 'httpClient'
>;

/** Agent defaults. */
export interface EngineDefaults {
  readonly maxTurns?: number | undefined;
  readonly maxParallelToolCalls?: number | undefined;
  readonly managerOptions?: EngineManagerOptions | undefined;
}

/**
 * One state store and principal for every agent of the engine (issue 16, a fleet of processes and hosts): quotas,
 * tool pins, OAuth tokens and shared policy revisions live in the store, so they hold across every process that
 * points at it.
 */
export interface EngineStateOptions {
  /** The shared store, e.g. `await RedisStateStore.connect({ url })`. Its owner closes it, after the engine. */
  store: StateStore;
  /** The tenant or user every agent acts for: in audit records and shared quota keys. @default none */
  principal?: string | undefined;
  /**
   * What a quota does while the store cannot answer: `'deny'` (fail closed) or `{ localShare: { replicas } }`
   * (each of `replicas` processes gives its share). Applies to sets the engine parses from policies and to shared
   * policies. @default 'deny'
   */
  quotaFallback?: QuotaFallback | undefined;
  /**
   * Leased quota units (`FleetQuotaCounter`'s `lease`): each process takes blocks of units and decides locally;
   * the fleet never exceeds a quota. Needs a `RedisStateStore`. @default off (a round trip per decision)
   */
  quotaLease?: FleetQuotaCounterOptions['lease'];
  /**
   * Names of shared policies (`SharedPolicy`) to follow: each becomes a capability set of that name for
   * `createAgent({ capabilities: name })`, updated on every published version. @default none
   */
  policies?: readonly string[] | undefined;
  /** Share tool pins through the store: an approval in one process unblocks the tool in all. @default true */
  pins?: boolean | undefined;
  /** Keep OAuth tokens in the store, refreshed by one process at a time (unless `managerOptions.serverAuth` is set). @default true */
  tokens?: boolean | undefined;
}

/** Options of `new Engine()`: each replaces one binding of the composition root. */
export interface EngineOptions {
  /** Creates each agent's manager. @default `(o) => new MCPClientManager(o)` */
  createManager?: ManagerFactory | undefined;
  /** Options every agent's manager gets (`clientInfo`, `pins`, `maxResultChars`, `serverAuth`...). */
  managerOptions?: EngineManagerOptions | undefined;
  /**
   * SSRF guard of the engine's one HTTP stack, which every agent's HTTP servers, their OAuth endpoints and the
   * model providers share. @default DEFAULT_NETWORK_POLICY (link-local and cloud metadata refused)
   */
  network?: NetworkPolicy | undefined;
  /** Proxy, certificates (custom CA, mTLS) and pooling of that stack. @default proxies from the environment */
  http?: HttpOptions | undefined;
  /**
   * A caller's fetch for MCP HTTP servers instead of the stack (only URL strings are then checked, and model
   * providers keep their own dispatchers). @default undici over the engine's guarded dispatcher
   */
  fetch?: FetchLike | undefined;
  /** Named capability sets or policy objects, for `createAgent({ capabilities: 'reader' })`. */
  capabilitySets?: Readonly<Record<string, CapabilitySet | Readonly<Record<string, unknown>>>> | undefined;
  /** Replaces how an agent's `capabilities` option becomes a set. @default sets as is, policies parsed, names looked up */
  resolveCapabilities?: CapabilityResolver | undefined;
  /** Receives every capability decision of every agent. @default none (decisions still become span events) */
  audit?: AuditSink | undefined;
  /** Decides `ask` rules. @default none: ask is deny */
  approver?: Approver | undefined;
  /** @default 'block' */
  auditFailure?: AuditFailureMode | undefined;
  /** @default `trace.getTracer('interlock', version)` (the global provider; a no-op until one is registered) */
  tracer?: Tracer | undefined;
  /** @default silent */
  logger?: Logger | undefined;
  /** Named providers, for `createAgent({ model: 'fast' })`. */
  models?: Readonly<Record<string, ModelProvider>> | undefined;
  /** The model of agents that name none: a provider, or a name in `models`. @default none (model required) */
  defaultModel?: ModelProvider | string | undefined;
  /** Ms since the epoch, for audit records and for rule expiry of sets parsed from policies. @default `Date.now` */
  clock?: (() => number) | undefined;
  /**
   * Share state with the other processes of a fleet: quotas, pins, OAuth tokens and policy revisions in one
   * store, and one principal for every agent. @default none: everything stays in this process
   */
  state?: EngineStateOptions | undefined;
  /** @default DEFAULT_MAX_TURNS (10) */
  maxTurns?: number | undefined;
  /** @default DEFAULT_MAX_PARALLEL_TOOL_CALLS (8) */
  maxParallelToolCalls?: number | undefined;
}

/** Options of `engine.createAgent()`. */
export interface AgentOptions {
  /** 1-64 characters of `[A-Za-z0-9_.-]`; named in audit records and spans. */
  name: string;
  /** Server configs, or the path of an `mcp.json`-style file. Connected in parallel before `createAgent` resolves. */
  mcpServers?: readonly MCPServerConfigInput[] | string | undefined;
  /** Variables for `${VAR}` in that file. @default process.env */
  loadOptions?: LoadMCPConfigOptions | undefined;
  /** What the agent may do. @default an empty set: every call is denied */
  capabilities?: CapabilitySpec | undefined;
  /** A provider, or a name in the engine's `models`. @default the engine's `defaultModel` */
  model?: ModelProvider | string | undefined;
  /** Native tools (`defineTool`), gated on `tool:{name}`. */
  tools?: readonly NativeTool[] | undefined;
  /** The system prompt. */
  instructions?: string | undefined;
  /** @default the engine's maxTurns */
  maxTurns?: number | undefined;
  /** @default the engine's maxParallelToolCalls */
  maxParallelToolCalls?: number | undefined;
  /** Reject (after closing the agent) when any enabled server fails to connect. @default false */
  requireAllServers?: boolean | undefined;
  /**
   * Answers this agent's servers' form-mode elicitations, after its capabilities allowed them on
   * `mcp:{server}:elicitation` / `request`. @default the engine's `managerOptions.onElicitation`, else none
   */
  onElicitation?: ElicitationHandler | undefined;
  /** Answers URL-mode elicitations (see `MCPClientManagerOptions.onUrlElicitation`). @default as above */
  onUrlElicitation?: UrlElicitationHandler | undefined;
  /** Answers sampling requests, after `mcp:{server}:sampling` / `request` was allowed. @default as above */
  onSampling?: SamplingHandler | undefined;
  /** Declares sampling with tools. @default as above */
  samplingWithTools?: boolean | undefined;
  /** The roots this agent's servers may see, each decided on `mcp:{server}:roots`. @default as above */
  roots?: RootsOption | undefined;
  /**
   * `content`: tool results reach the model with their images and audio as the provider's media parts (for
   * vision- or audio-capable models), besides the text. @default 'text'
   */
  toolResults?: 'text' | 'content' | undefined;
}

/** The agent options that answer server requests, handed to its manager. */
export const SERVER_REQUEST_OPTION_KEYS = [
  'onElicitation',
  'onUrlElicitation',
  'onSampling',
  'samplingWithTools',
  'roots',
] as const satisfies readonly (keyof AgentOptions & keyof MCPClientManagerOptions)[];
