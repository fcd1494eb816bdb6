/**
 * The options of `MCPClientManager`, and their check: every option that is not an object of ours (a capability set,
 * a logger, a fetch) is validated once, when the manager is made, and a bad one is `INVALID_CONFIG` naming it.
 */
import type { FetchLike, LoggingLevel } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import type { HttpClient, HttpOptions } from '../net/http.js';
import type { NetworkPolicy } from '../net/network.js';
import type { Tracer } from '../otel.js';
import type { ClientIdentity } from '../protocol/transport.js';
import type { CapabilitySet } from '../security/capability-set.js';
import { FlowState } from '../security/flow.js';
import type { PinStore } from '../security/pinning.js';
import type { Approver, AuditSink } from '../security/types.js';
import type { ArgumentLimits } from '../tools/limits.js';
import { MAX_TOOL_NAME_LENGTH_LIMIT, MIN_TOOL_NAME_LENGTH } from '../tools/names.js';
import { toConfigIssues } from '../zod-issues.js';
import type { FlowLabelResolver } from './flow-context.js';
import type { Logger } from './logger.js';
import type { ServerAuthFactory } from './open-client.js';
import { LOG_LEVELS } from './server-logs.js';
import type {
  ElicitationHandler,
  RootsOption,
  SamplingHandler,
  UrlElicitationHandler,
} from './server-requests.js';

/** Options of `MCPClientManager`. */
export interface MCPClientManagerOptions {
  /**
   * The capability set every call is checked against. Without one, every call is denied with
   * `CAPABILITY_DENIED` (default deny); use `CapabilitySet.allowAll()` only in tests.
   */
  capabilities?: CapabilitySet | undefined;
  /** Decides `ask` rules. Without one, `ask` is deny. */
  approver?: Approver | undefined;
  /** Receives every decision. */
  audit?: AuditSink | undefined;
  /** Whether a failing audit sink blocks calls. @default 'block' */
  auditFailure?: 'block' | 'continue' | undefined;
  /** The agent name put in audit records and conditions when a call names none. */
  agent?: string | undefined;
  /** The principal (tenant, user) put in audit records and shared quota keys when a call names none. */
  principal?: string | undefined;
  /**
   * The manager's own flow state (issue 42): what the calls that name no `flow` are decided in, and what their
   * results are recorded into. @default a new `FlowState()`
   */
  flow?: FlowState | undefined;
  /**
   * Resolves the labels of each tool, resource and prompt called or read (issue 42): conditions see them as
   * `labels`, and a result is recorded into the flow state with its content labels.
   * @default none: labels are unknown (a condition on the target's labels fails closed) and nothing is recorded
   */
  flowLabels?: FlowLabelResolver | undefined;
  /**
   * Caps on each call's arguments, checked before validation and before anything is sent: text size, nesting
   * and number of values. @default DEFAULT_MAX_ARGUMENT_BYTES (4 MiB), _DEPTH (64), _NODES (100 000)
   */
  argumentLimits?: ArgumentLimits | undefined;
  /** Longest exposed tool name (56-128: room for a 40-character server name and a hash suffix). @default 64 */
  maxToolNameLength?: number | undefined;
  /** Results longer than this are cut with a visible notice. @default 100 000 */
  maxResultChars?: number | undefined;
  /** Name and version sent in `initialize`. @default { name: 'interlock', version: <package version> } */
  clientInfo?: ClientIdentity | undefined;
  /** @default silent */
  logger?: Logger | undefined;
  /** The fetch used for HTTP transports. @default a fetch over one shared keep-alive dispatcher (undici) */
  fetch?: FetchLike | undefined;
  /**
   * SSRF guard: which hosts HTTP servers, redirects and OAuth endpoints may resolve to. With a custom `fetch` only
   * the URL string is checked (its sockets are its own). @default DEFAULT_NETWORK_POLICY (loopback and private allowed, link-local/cloud metadata refused);
   * pass `{}` to refuse loopback, private and CGNAT addresses as well
   */
  network?: NetworkPolicy | undefined;
  /** The shared dispatcher: proxy (`'env'` by default), custom CA, client certificate (mTLS), pooling. */
  http?: HttpOptions | undefined;
  /**
   * An HTTP stack shared with others (an engine's, from `createHttpClient`): its guard, proxy, certificates and
   * pooled sockets are used, and its owner closes it. Excludes `fetch`, `network` and `http`.
   */
  httpClient?: HttpClient | undefined;
  /**
   * Auth per HTTP server: OAuth (a config's `auth`) and dynamic headers, e.g. `createServerAuth()` from
   * `mcp-interlock/auth`. @default none (static `headers` only)
   */
  serverAuth?: ServerAuthFactory | undefined;
  /**
   * Where tool definitions are pinned (rug-pull defense). Load one with `PinStore.load(path)` and save it after
   * approvals so they survive restarts. @default a new in-memory store
   */
  pins?: PinStore | undefined;
  /**
   * The OpenTelemetry tracer for connect, `tools/list` and `tools/call` spans. Only the API is used: without a
   * registered SDK the spans cost next to nothing. @default trace.getTracer('interlock')
   */
  tracer?: Tracer | undefined;
  /**
   * Answers a server's form-mode elicitation (a question for the user). Each request is first decided on
   * `mcp:{server}:elicitation` / `request`; denied ones are declined without asking. @default none: the
   * elicitation capability is not declared
   */
  onElicitation?: ElicitationHandler | undefined;
  /**
   * Answers a server's URL-mode elicitation (open a URL in the user's browser). Unsafe URLs are refused first;
   * the rest are decided on `mcp:{server}:elicitation` / `request` with `mode`, `url`, `host` and `punycode` as
   * the condition's `args` (an allowlist of domains); denied ones are declined. Interlock never fetches the URL.
   * @default none: URL mode is not declared
   */
  onUrlElicitation?: UrlElicitationHandler | undefined;
  /**
   * Answers a server's sampling request (`sampling/createMessage`), decided first on `mcp:{server}:sampling` /
   * `request` (`maxTokens`, the model hints as `models`, the offered `tools` and `toolChoice` are the
   * condition's `args`); denied ones get an error. @default none: the sampling capability is not declared
   */
  onSampling?: SamplingHandler | undefined;
  /**
   * The least severe log message servers may send: set with `logging/setLevel` on 2025-era servers that declare
   * logging, and sent with every call on 2026-07-28 servers (a call's own `logLevel` wins). Messages go to the
   * logger and the `server_log` event. @default none: 2026 servers send no log messages
   */
  logLevel?: LoggingLevel | undefined;
  /** Declares sampling with tools: servers may offer tools to the sampled model. @default false */
  samplingWithTools?: boolean | undefined;
  /**
   * The roots (`file://` URIs) servers may see. Each root is decided on `mcp:{server}:roots` / `request` with its
   * `uri`, `path` and `name` as `args`; only allowed ones are sent, and none allowed is an error.
   * @default none: the roots capability is not declared
   */
  roots?: RootsOption | undefined;
  /**
   * The most input requests one `input_required` round of a 2026-07-28 server may carry. A round with more fails
   * the call with `SERVER_ERROR` before any handler is asked. @default `MAX_INPUT_REQUESTS_PER_ROUND` (16)
   */
  maxInputRequestsPerRound?: number | undefined;
}

/** The schema of the options that are plain values, built with the first manager rather than at import (issue 15). */
function buildOptionsSchema() {
  return z.object({
    maxToolNameLength: z.number().int().min(MIN_TOOL_NAME_LENGTH).max(MAX_TOOL_NAME_LENGTH_LIMIT).optional(),
    maxResultChars: z.number().int().min(100).optional(),
    auditFailure: z.enum(['block', 'continue']).optional(),
    agent: z.string().min(1).optional(),
    principal: z.string().min(1).max(256).optional(),
    flow: z.custom<FlowState>((v) => v instanceof FlowState, 'must be a FlowState').optional(),
    flowLabels: z
      .custom<FlowLabelResolver>(
        (v) => typeof (v as { labelsFor?: unknown } | null)?.labelsFor === 'function',
        'must have a labelsFor(resource, annotations) function',
      )
      .optional(),
    argumentLimits: z
      .strictObject({
        maxBytes: z.number().int().positive().optional(),
        maxDepth: z.number().int().positive().max(10_000).optional(),
        maxNodes: z.number().int().positive().optional(),
      })
      .optional(),
    clientInfo: z.object({ name: z.string().min(1), version: z.string().min(1) }).optional(),
    onElicitation: z
      .custom<ElicitationHandler>((v) => typeof v === 'function', 'must be a function')
      .optional(),
    onUrlElicitation: z
      .custom<UrlElicitationHandler>((v) => typeof v === 'function', 'must be a function')
      .optional(),
    onSampling: z.custom<SamplingHandler>((v) => typeof v === 'function', 'must be a function').optional(),
    samplingWithTools: z.boolean().optional(),
    logLevel: z.enum(LOG_LEVELS).optional(),
    maxInputRequestsPerRound: z.number().int().min(1).max(1000).optional(),
    roots: z
      .union([
        z.array(
          z.object({
            uri: z.string().startsWith('file://', 'a root must be a file:// URI'),
            name: z.string().optional(),
          }),
        ),
        z.custom<RootsOption>((v) => typeof v === 'function', 'must be a list of roots or a function'),
      ])
      .optional(),
  });
}

let optionsSchema: ReturnType<typeof buildOptionsSchema> | undefined;

/** Throws `INVALID_CONFIG`, naming each bad option, unless `options` can make a manager. */
export function checkManagerOptions(options: MCPClientManagerOptions): void {
  optionsSchema ??= buildOptionsSchema();
  const parsed = optionsSchema.safeParse({
    maxToolNameLength: options.maxToolNameLength,
    maxResultChars: options.maxResultChars,
    auditFailure: options.auditFailure,
    agent: options.agent,
    principal: options.principal,
    flow: options.flow,
    flowLabels: options.flowLabels,
    argumentLimits: options.argumentLimits,
    clientInfo: options.clientInfo,
    onElicitation: options.onElicitation,
    onUrlElicitation: options.onUrlElicitation,
    onSampling: options.onSampling,
    samplingWithTools: options.samplingWithTools,
    roots: options.roots,
    logLevel: options.logLevel,
    maxInputRequestsPerRound: options.maxInputRequestsPerRound,
  });
  if (!parsed.success) {
    const issues = toConfigIssues(parsed.error);
    throw new ConfigError(
      `Invalid MCPClientManager options: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      { issues },
    );
  }
  if (options.httpClient !== undefined) {
    const both = (['fetch', 'network', 'http'] as const).filter((k) => options[k] !== undefined);
    if (both.length > 0)
      throw new ConfigError(
        `Invalid MCPClientManager options: httpClient brings its own HTTP settings; drop ${both.join(', ')} or set them on the client.`,
        { issues: both.map((k) => ({ path: k, message: 'not allowed with httpClient' })) },
      );
  }
}
