/**
 * Server configuration: one zod schema per transport, a union on `transport`, parsed once where it enters.
 * The schema is the source of the TypeScript types, and its `.describe()` texts are the one source of the
 * field descriptions: the API reference's field tables (docs/reference/config-types.md), the project file's
 * reference page and the shipped JSON Schema are generated from them.
 */
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { lazySchema, once } from '../lazy.js';
import { flowLabelSchemas } from '../security/flow-labels.js';
import { matchGlob } from '../security/pattern.js';
import { describeIssues, toConfigIssues } from '../zod-issues.js';
import { buildRemoteSchemas } from './remote-schemas.js';

/** Per-request timeout. @default 60 000 ms */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** Connect (spawn or HTTP handshake plus `initialize` and discovery) timeout. @default 30 000 ms */
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;

/** Reconnect defaults. */
export const DEFAULT_RECONNECT = Object.freeze({
  enabled: true,
  maxAttempts: 5,
  initialDelayMs: 250,
  maxDelayMs: 30_000,
  factor: 2,
  jitter: 'full' as const,
});

// Issue 15, import time: the schemas (about 400 zod objects) are built at their first use, not when
// `mcp-interlock/interop` is imported. Code here reads them through `serverSchemas()`; the exported names are
// stand-ins that build them when first touched and then behave as they do.
function buildSchemas() {
  const SERVER_NAME_RE = /^[A-Za-z0-9_-]{1,40}$/;

  const ServerNameSchema = z
    .string()
    .regex(SERVER_NAME_RE, 'must be 1-40 characters of A-Z, a-z, 0-9, _ and -')
    .refine((s) => !s.includes('__'), 'must not contain "__" (it separates server and tool in tool names)')
    .refine((s) => !s.startsWith('_') && !s.endsWith('_'), 'must not start or end with "_"')
    .describe(
      'Unique name of the server within a manager: the `{server}` of `mcp__{server}__{tool}` and of `mcp:{server}:{tool}`. 1-40 characters of `A-Z a-z 0-9 _ -`, no `__`, not starting or ending with `_`.',
    );

  /** A tool-name filter entry: an exact original tool name, or a glob where `*` matches any run of characters. */
  const ToolNamePattern = z.string().min(1, 'must not be empty');

  const ToolFilterSchema = z
    .object({
      allow: z
        .array(ToolNamePattern)
        .optional()
        .describe('Tools to expose: exact names or `*` globs. Without it, every tool.'),
      deny: z.array(ToolNamePattern).optional().describe('Tools never to expose, even when `allow` matches.'),
      idempotent: z
        .array(ToolNamePattern)
        .optional()
        .describe(
          'Tools safe to send twice (exact names or `*` globs): after a lost connection their call is sent again once the server is back. Other calls are re-sent only when they never reached the server. Server annotations (idempotentHint) are untrusted and never make a call be sent twice.',
        ),
    })
    .strict()
    .describe(
      'Which tools of this server are exposed at all, and which are safe to retry. Deny wins over allow.',
    );

  const ReconnectSchema = z
    .object({
      enabled: z.boolean().default(DEFAULT_RECONNECT.enabled).describe('Reconnect after the server drops.'),
      // The default sits before the transform so that the JSON Schema (the input side) shows it.
      maxAttempts: z
        .union([z.literal(Number.POSITIVE_INFINITY), z.literal('Infinity'), z.number().int().positive()])
        .default(DEFAULT_RECONNECT.maxAttempts)
        .transform((v) => (v === 'Infinity' ? Number.POSITIVE_INFINITY : v))
        .describe(
          'Attempts before the server is failed; Infinity (or the string "Infinity") never gives up.',
        ),
      initialDelayMs: z
        .number()
        .int()
        .min(0)
        .max(3_600_000)
        .default(DEFAULT_RECONNECT.initialDelayMs)
        .describe('Delay before the first attempt, in milliseconds.'),
      maxDelayMs: z
        .number()
        .int()
        .min(0)
        .max(3_600_000)
        .default(DEFAULT_RECONNECT.maxDelayMs)
        .describe('Cap on any delay, in milliseconds.'),
      factor: z
        .number()
        .min(1)
        .max(10)
        .default(DEFAULT_RECONNECT.factor)
        .describe('Growth of the delay per attempt.'),
      jitter: z
        .enum(['full', 'none'])
        .default(DEFAULT_RECONNECT.jitter)
        .describe('full: a random delay between 0 and the computed one (spreads herds); none: exact.'),
    })
    .strict()
    .describe('How a server that drops is brought back: exponential backoff with jitter.');

  const transportField = <T extends string>(kind: T) =>
    z.literal(kind).describe('How the server is reached: stdio, sse, http or auto.');

  // Field descriptions live on the schemas (`.describe()`), the one source the docs are generated from.
  const common = {
    name: ServerNameSchema,
    timeoutMs: z
      .number()
      .int()
      .positive()
      .max(86_400_000)
      .default(DEFAULT_REQUEST_TIMEOUT_MS)
      .describe('Per-request timeout in milliseconds.'),
    connectTimeoutMs: z
      .number()
      .int()
      .positive()
      .max(3_600_000)
      .default(DEFAULT_CONNECT_TIMEOUT_MS)
      .describe('Connect timeout (start, initialize and tool discovery) in milliseconds.'),
    tools: ToolFilterSchema.optional(),
    enabled: z.boolean().default(true).describe('A disabled server is validated but never connected.'),
    onToolChange: z
      .enum(['block', 'warn', 'accept'])
      .default('block')
      .describe(
        "What to do when a tool's definition differs from its pin (a rug pull, or an honest update): block its calls until approved, warn and re-pin, or accept and re-pin quietly.",
      ),
    reconnect: ReconnectSchema.default(ReconnectSchema.parse({})),
    maxTotalTimeoutMs: z
      .number()
      .int()
      .positive()
      .max(86_400_000)
      .optional()
      .describe(
        'Total time a call may take even while the server reports progress (progress resets timeoutMs), in milliseconds.',
      ),
    maxConcurrentCalls: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('Calls in flight at once to this server; more wait in a bounded queue. Default: unlimited.'),
    maxQueuedCalls: z
      .number()
      .int()
      .min(0)
      .default(100)
      .describe('Calls that may wait for a slot; beyond it calls fail fast with OVERLOADED.'),
    // Issue 42: what this server's results carry into a session, and what its tools are as destinations.
    ...flowLabelSchemas().serverShape,
  };

  const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a valid environment variable name');

  const StdioServerConfigSchema = z
    .object({
      ...common,
      transport: transportField('stdio'),
      command: z.string().min(1, 'must not be empty').describe('The program to run (no shell is involved).'),
      args: z.array(z.string()).default([]).describe('Arguments of the program.'),
      env: z
        .record(EnvName, z.string())
        .default({})
        .describe(
          'Extra environment variables for the server process, on top of the minimal default environment. Values are never printed.',
        ),
      cwd: z
        .string()
        .min(1)
        .optional()
        .describe(
          "Working directory of the server process. Default: this process's; in a project file, the directory of that file (and a relative cwd is relative to it).",
        ),
      inheritEnv: z
        .union([z.boolean(), z.array(EnvName)])
        .default(false)
        .describe(
          'Variables of this process the server inherits beyond HOME, LOGNAME, PATH, SHELL, TERM and USER: true for all, or a list of names.',
        ),
      maxMessageBytes: z
        .number()
        .int()
        .min(1024)
        .max(2 ** 31)
        // The MCP SDK's stdio limit (STDIO_DEFAULT_MAX_BUFFER_SIZE); test/protocol/stdio-limits.test.ts keeps them equal.
        .default(10 * 1024 * 1024)
        .describe(
          "The largest message (one line of output) accepted from the server, in bytes (default 10 MiB, the MCP SDK's limit); a larger one closes the connection with an error that names this limit.",
        ),
    })
    .strict()
    .describe('A local server run as a child process, speaking MCP over its stdin and stdout.');

  const {
    HttpUrl,
    HeaderName,
    IdpConfigSchema,
    OAuthConfigSchema,
    TokenExchangeConfigSchema,
    HeadersHelperSchema,
    ServerTlsSchema,
    ServerProxySchema,
    NetworkConfigSchema,
    HttpConfigSchema,
  } = buildRemoteSchemas();

  const httpFields = {
    url: HttpUrl.describe('The server endpoint: an absolute http: or https: URL.'),
    headers: z
      .record(HeaderName, z.string())
      .default({})
      .describe('Headers sent with every request, e.g. Authorization. Values are never printed.'),
    auth: z
      .discriminatedUnion('type', [OAuthConfigSchema, TokenExchangeConfigSchema])
      .optional()
      .describe(
        "How the server is authorized: 'oauth' (the gateway's or the app's own OAuth 2.1 grant) or 'token_exchange' (a gateway caller's identity, exchanged per caller).",
      ),
    headersHelper: HeadersHelperSchema.optional(),
    tls: ServerTlsSchema.optional(),
    proxy: ServerProxySchema.optional(),
  };

  /** A remote server on one of the HTTP transports: the common fields, the HTTP ones, and its `transport`. */
  const remote = <T extends 'sse' | 'http' | 'auto'>(transport: T, description: string) =>
    z
      .object({ ...common, transport: transportField(transport), ...httpFields })
      .strict()
      .describe(description);
  const SseServerConfigSchema = remote('sse', 'A remote server speaking the 2024-11-05 HTTP+SSE transport.');
  const HttpServerConfigSchema = remote(
    'http',
    'A remote server speaking Streamable HTTP (MCP 2025-03-26 and later).',
  );
  const AutoServerConfigSchema = remote(
    'auto',
    'A remote server: Streamable HTTP first, HTTP+SSE when the server answers the first request with a 4xx.',
  );

  const MCPServerConfigSchema = z
    .discriminatedUnion(
      'transport',
      [StdioServerConfigSchema, SseServerConfigSchema, HttpServerConfigSchema, AutoServerConfigSchema],
      // The message of a missing or unknown transport, on the schema so every reader of its errors gets it.
      { error: () => `'transport' must be one of 'stdio', 'sse', 'http', 'auto'` },
    )
    .describe(
      'One MCP server: its name, how it is reached (transport and command or url) and per-server options.',
    );

  return {
    ServerNameSchema,
    ToolFilterSchema,
    ReconnectSchema,
    StdioServerConfigSchema,
    IdpConfigSchema,
    OAuthConfigSchema,
    HeadersHelperSchema,
    ServerTlsSchema,
    ServerProxySchema,
    NetworkConfigSchema,
    HttpConfigSchema,
    SseServerConfigSchema,
    HttpServerConfigSchema,
    AutoServerConfigSchema,
    MCPServerConfigSchema,
  };
}

/** The server-config schemas, built at the first call. */
export const serverSchemas = once(buildSchemas);
type Schemas = ReturnType<typeof buildSchemas>;

/** A server name: 1-40 characters of `[A-Za-z0-9_-]`, no `__`, not starting or ending with `_`. */
export const ServerNameSchema: Schemas['ServerNameSchema'] = lazySchema(
  () => serverSchemas().ServerNameSchema,
);
/** Which tools of a server are exposed at all. Deny wins over allow; no `allow` means all. */
export const ToolFilterSchema: Schemas['ToolFilterSchema'] = lazySchema(
  () => serverSchemas().ToolFilterSchema,
);
/** How a server that drops is brought back: exponential backoff with jitter. */
export const ReconnectSchema: Schemas['ReconnectSchema'] = lazySchema(() => serverSchemas().ReconnectSchema);
/** A server run as a child process, speaking JSON-RPC over its stdin and stdout. */
export const StdioServerConfigSchema: Schemas['StdioServerConfigSchema'] = lazySchema(
  () => serverSchemas().StdioServerConfigSchema,
);
/** The identity provider of a cross-app access grant (RFC 8693 token exchange for an ID-JAG). */
export const IdpConfigSchema: Schemas['IdpConfigSchema'] = lazySchema(() => serverSchemas().IdpConfigSchema);
/** OAuth 2.1 for this server (issue 9); run by the auth area's `createServerAuth`. Secrets are never logged. */
export const OAuthConfigSchema: Schemas['OAuthConfigSchema'] = lazySchema(
  () => serverSchemas().OAuthConfigSchema,
);
/** A command whose stdout is a JSON object of headers, run again when the server answers 401. */
export const HeadersHelperSchema: Schemas['HeadersHelperSchema'] = lazySchema(
  () => serverSchemas().HeadersHelperSchema,
);
/**
 * TLS for one server, on top of the manager's `http.tls`: PEM text (`ca`, `cert`, `key`, e.g. from `${VAR}`) or
 * files (`caFile`, `certFile`, `keyFile`, read at connect time). Contents are never logged.
 */
export const ServerTlsSchema: Schemas['ServerTlsSchema'] = lazySchema(() => serverSchemas().ServerTlsSchema);
/** `'env'` (HTTP_PROXY / HTTPS_PROXY / NO_PROXY), `'none'`, or a proxy URL for this server. */
export const ServerProxySchema: Schemas['ServerProxySchema'] = lazySchema(
  () => serverSchemas().ServerProxySchema,
);
/** The SSRF guard as written in a file: `network` of the project file (see `NetworkPolicy`). */
export const NetworkConfigSchema: Schemas['NetworkConfigSchema'] = lazySchema(
  () => serverSchemas().NetworkConfigSchema,
);
/** The shared HTTP stack as written in a file: `http` of the project file (see `HttpOptions`). */
export const HttpConfigSchema: Schemas['HttpConfigSchema'] = lazySchema(
  () => serverSchemas().HttpConfigSchema,
);
/** The 2024-11-05 HTTP+SSE transport. */
export const SseServerConfigSchema: Schemas['SseServerConfigSchema'] = lazySchema(
  () => serverSchemas().SseServerConfigSchema,
);
/** Streamable HTTP (MCP 2025-03-26 and later). */
export const HttpServerConfigSchema: Schemas['HttpServerConfigSchema'] = lazySchema(
  () => serverSchemas().HttpServerConfigSchema,
);
/** Streamable HTTP first; SSE when the server answers the initialize POST with a 4xx (the spec's fallback). */
export const AutoServerConfigSchema: Schemas['AutoServerConfigSchema'] = lazySchema(
  () => serverSchemas().AutoServerConfigSchema,
);
/** Any server config, discriminated by `transport`. */
export const MCPServerConfigSchema: Schemas['MCPServerConfigSchema'] = lazySchema(
  () => serverSchemas().MCPServerConfigSchema,
);

export type ReconnectOptions = z.output<typeof ReconnectSchema>;

/** A validated server config, defaults applied. */
export type MCPServerConfig = z.output<typeof MCPServerConfigSchema>;
/** What callers write: defaults may be left out. */
export type MCPServerConfigInput = z.input<typeof MCPServerConfigSchema>;
export type StdioServerConfig = z.output<typeof StdioServerConfigSchema>;
export type HttpServerConfig = z.output<typeof HttpServerConfigSchema>;
export type SseServerConfig = z.output<typeof SseServerConfigSchema>;
export type AutoServerConfig = z.output<typeof AutoServerConfigSchema>;
export type ToolFilter = z.output<typeof ToolFilterSchema>;
export type OAuthConfig = z.output<typeof OAuthConfigSchema>;
export type HeadersHelperConfig = z.output<typeof HeadersHelperSchema>;
export type ServerTlsConfig = z.output<typeof ServerTlsSchema>;
export type ServerProxyConfig = z.output<typeof ServerProxySchema>;
export type NetworkConfig = z.output<typeof NetworkConfigSchema>;
export type HttpConfig = z.output<typeof HttpConfigSchema>;
export type TransportKind = MCPServerConfig['transport'];

function describeServer(input: unknown, index: number | undefined): string {
  const name =
    typeof input === 'object' && input !== null && typeof (input as { name?: unknown }).name === 'string'
      ? (input as { name: string }).name
      : undefined;
  if (name !== undefined) return `server '${name}'`;
  return index === undefined ? 'server config' : `server config #${index}`;
}

/**
 * Validates one server config and applies defaults. Throws {@link ConfigError} (`INVALID_CONFIG`) naming the
 * server and every bad field path.
 */
export function parseServerConfig(input: unknown, index?: number): MCPServerConfig {
  const result = serverSchemas().MCPServerConfigSchema.safeParse(input);
  if (result.success) return result.data;
  const issues = toConfigIssues(result.error);
  const who = describeServer(input, index);
  const server = typeof input === 'object' && input !== null ? (input as { name?: unknown }).name : undefined;
  throw new ConfigError(`Invalid ${who}: ${describeIssues(issues)}`, {
    issues,
    server: typeof server === 'string' ? server : undefined,
  });
}

/** Validates a list of configs, including that names are unique. */
export function parseServerConfigs(inputs: readonly unknown[]): MCPServerConfig[] {
  const configs = inputs.map((input, i) => parseServerConfig(input, i));
  const seen = new Set<string>();
  for (const config of configs) {
    if (seen.has(config.name)) {
      throw new ConfigError(
        `Invalid server '${config.name}': name: duplicate server name; every server needs a unique name`,
        { issues: [{ path: 'name', message: 'duplicate server name' }], server: config.name },
      );
    }
    seen.add(config.name);
  }
  return configs;
}

/** True when an original tool name passes the server's `tools.allow` / `tools.deny` filter. */
export function toolPassesFilter(filter: ToolFilter | undefined, tool: string): boolean {
  if (filter === undefined) return true;
  if (filter.deny?.some((p) => matchGlob(p, tool))) return false;
  if (filter.allow === undefined) return true;
  return filter.allow.some((p) => matchGlob(p, tool));
}

/** True when `tool` matches any of `patterns` (exact names or `*` globs). */
export function toolMatchesAny(patterns: readonly string[] | undefined, tool: string): boolean {
  return patterns?.some((p) => matchGlob(p, tool)) ?? false;
}
