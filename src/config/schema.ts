/**
 * The project file (`interlock.config.yaml` or `.json`, issue 6): servers in the Claude Desktop / `.mcp.json`
 * shape (or VS Code's `servers`), per-server options, a capability policy, and where pins and audit records go.
 *
 * The server entries are derived from the interop schemas (`MCPServerConfigSchema`), so a field added there
 * (reconnect, idempotent tools, ...) is accepted and documented here without a change. Validation of server
 * entries goes through `parseMCPConfig`, the same code that reads `mcp.json`; the policy goes through
 * `PolicySchema` and `CapabilitySet.fromPolicy`. {@link InterlockConfigSchema} describes the whole file for
 * editors (the shipped JSON Schema) and for the reference page.
 */
import { z } from 'zod';
import {
  HttpConfigSchema,
  MCPServerConfigSchema,
  NetworkConfigSchema,
  ServerNameSchema,
} from '../interop/config.js';
import { RedisStateStoreOptionsSchema } from '../state/options.js';
import { PolicyDocSchema } from './policy-docs.js';

/** The project file format version. */
export const CONFIG_VERSION = 1;
/** File names looked for in the working directory, in this order, when no `--config` is given. */
export const DEFAULT_CONFIG_FILES: readonly string[] = Object.freeze([
  'interlock.config.yaml',
  'interlock.config.yml',
  'interlock.config.json',
]);
/** Where pins are kept when the file names no `pins.file`, relative to the project file. */
export const DEFAULT_PINS_FILE = '.interlock/pins.json';
/** The agent name put in audit records and policy conditions when the file names none. */
export const DEFAULT_AGENT = 'interlock-cli';

/**
 * Descriptions for editors and the reference page, by field path inside a server entry, for fields whose
 * interop schema carries none (a description set there with `.meta({ description })` wins).
 */
const FIELD_DOCS: Readonly<Record<string, string>> = {
  timeoutMs: 'Per-request timeout in milliseconds.',
  connectTimeoutMs: 'Connect timeout (start, initialize and tool discovery) in milliseconds.',
  tools: 'Which tools of this server are exposed at all, and which are safe to retry.',
  'tools.allow': 'Tools to expose: exact names or `*` globs. Without it, every tool.',
  'tools.deny': 'Tools never to expose, even when `allow` matches.',
  'tools.idempotent': 'Tools safe to send again after a reconnect (exact names or `*` globs).',
  enabled: 'A disabled server is validated but never connected.',
  onToolChange:
    "What to do when a tool's definition differs from its pin: block its calls until approved, warn and re-pin, or accept quietly.",
  reconnect: 'How a server that drops is brought back: exponential backoff with jitter.',
  'reconnect.enabled': 'Reconnect after the server drops.',
  'reconnect.maxAttempts': 'Attempts before the server is failed; "Infinity" never gives up. Default 5.',
  'reconnect.initialDelayMs': 'Delay before the first attempt, in milliseconds.',
  'reconnect.maxDelayMs': 'Cap on any delay, in milliseconds.',
  'reconnect.factor': 'Growth of the delay per attempt.',
  'reconnect.jitter': 'full: a random delay up to the computed one; none: exact.',
  maxTotalTimeoutMs: 'Total time a call may take even while the server reports progress, in milliseconds.',
  maxConcurrentCalls:
    'Calls in flight at once to this server; more wait in a bounded queue. Default unlimited.',
  maxQueuedCalls: 'Calls that may wait for a slot; beyond it calls fail fast with OVERLOADED.',
  command: 'The program to run (no shell is involved).',
  args: 'Arguments of the program. Relative paths resolve against `cwd`.',
  env: 'Extra environment variables for the server process. Values are never printed.',
  cwd: 'Working directory of the server process, relative to this file. Default: the directory of this file.',
  inheritEnv:
    'Variables of this process the server inherits beyond HOME, LOGNAME, PATH, SHELL, TERM and USER: true for all, or a list of names.',
  maxMessageBytes: 'The largest message (one line of output) accepted from the server. Default 128 MiB.',
  url: 'The server endpoint: an absolute http: or https: URL.',
  headers: 'Headers sent with every request, e.g. Authorization. Values are never printed.',
  auth: 'OAuth 2.1 for this server: authorization code (a user signs in), client credentials (machine to machine), cross-app access (an enterprise ID token) or a workload JWT. Secrets are never printed.',
  'auth.type': "Always 'oauth'.",
  'auth.grant':
    "'authorization_code' (default), 'client_credentials', 'cross_app_access' (needs idp) or 'jwt_bearer' (a workload JWT as the grant).",
  'auth.assertion':
    "For 'jwt_bearer': the workload's JWT: reference an environment variable rather than writing it here. Never printed.",
  'auth.issuer':
    'Issuer of the authorization server the configured clientId belongs to; the client id and secret go nowhere else. Default: the first one the server names.',
  'auth.dpop':
    'Bind tokens to a key held in memory and prove it on every request (DPoP, RFC 9449). Default false: bearer tokens.',
  'auth.idp':
    "For 'cross_app_access': the enterprise identity provider that exchanges an ID token for an ID-JAG.",
  'auth.idp.issuer': "The identity provider's issuer; its token endpoint is discovered from its metadata.",
  'auth.idp.tokenEndpoint': "The identity provider's token endpoint, when not discovered from issuer.",
  'auth.idp.clientId': "This client's id at the identity provider.",
  'auth.idp.clientSecret': "This client's secret at the identity provider. Never printed.",
  'auth.idp.idToken':
    "The user's ID token from the identity provider: reference an environment variable rather than writing it here. Never printed.",
  'auth.clientId': 'A pre-registered client id; without one the client registers dynamically (RFC 7591).',
  'auth.clientSecret': 'The client secret of a confidential client. Never printed.',
  'auth.tokenEndpointAuthMethod':
    "How the client authenticates at the token endpoint: 'client_secret_basic', 'client_secret_post', 'private_key_jwt' or 'none'.",
  'auth.privateKey': "PEM (PKCS#8) private key for 'private_key_jwt'. Never printed.",
  'auth.signingAlgorithm': "JWS algorithm for 'private_key_jwt', e.g. RS256 or ES256.",
  'auth.clientMetadataUrl': 'HTTPS URL of a client ID metadata document, used as the client id.',
  'auth.scope': 'Scopes to ask for when the server names none.',
  'auth.redirectPort': 'Fixed loopback port for the sign-in redirect. Default: any free port.',
  headersHelper:
    'A command whose output (a JSON object) gives headers; run again when the server answers 401.',
  'headersHelper.command': 'The program to run (no shell).',
  'headersHelper.args': 'Its arguments.',
};

interface WrapperDef {
  type: string;
  innerType?: z.ZodType;
  defaultValue?: unknown;
  shape?: Record<string, z.ZodType>;
}

/** `schema` with the descriptions of {@link FIELD_DOCS} at `path` and below (objects, optional, default). */
function documented(schema: z.ZodType, path: string): z.ZodType {
  const def = (schema as unknown as { _zod: { def: WrapperDef } })._zod.def;
  let out = schema;
  if (def.type === 'default' && def.innerType !== undefined) {
    out = documented(def.innerType, path).default(def.defaultValue as never);
  } else if (def.type === 'optional' && def.innerType !== undefined) {
    out = documented(def.innerType, path).optional();
  } else if (def.type === 'object' && def.shape !== undefined) {
    const fields = Object.entries(def.shape).map(([key, field]) => [
      key,
      documented(field, `${path}.${key}`),
    ]);
    out = (schema as z.ZodObject).safeExtend(Object.fromEntries(fields));
  }
  // A description of the field itself wins; extending an object drops it, so it is put back.
  const doc = schema.description ?? FIELD_DOCS[path.slice(1)];
  return doc !== undefined && out.description === undefined ? out.describe(doc) : out;
}

/** `type` values accepted for each transport, as Claude Desktop, `.mcp.json` and VS Code write them. */
export const TRANSPORT_TYPE_ALIASES: Readonly<Record<string, readonly string[]>> = Object.freeze({
  stdio: ['stdio'],
  sse: ['sse'],
  http: ['http', 'streamable-http', 'streamableHttp', 'streamable_http'],
  auto: [],
});

const TRANSPORT_DOCS: Readonly<Record<string, string>> = {
  stdio: 'A local server run as a child process, speaking MCP over stdin and stdout.',
  sse: 'A remote server speaking the 2024-11-05 HTTP+SSE transport.',
  http: 'A remote server speaking Streamable HTTP (MCP 2025-03-26 and later).',
  auto: 'A remote server: Streamable HTTP first, HTTP+SSE when the server answers the first request with a 4xx.',
};

type Variant = (typeof MCPServerConfigSchema.options)[number];

/** One entry of `mcpServers` for one transport: the interop fields minus `name`, plus the file-format aliases. */
function entryVariant(variant: Variant): z.ZodType {
  const { name: _name, transport, ...fields } = variant.shape as Record<string, z.ZodType>;
  const kind = (transport as z.ZodLiteral<string>).value;
  const shape: Record<string, z.ZodType> = {};
  for (const [key, field] of Object.entries(fields)) shape[key] = documented(field, `.${key}`);
  const aliases = TRANSPORT_TYPE_ALIASES[kind] ?? [];
  const type =
    aliases.length === 0
      ? undefined
      : z
          .enum(aliases as [string, ...string[]])
          .optional()
          .describe(
            'The transport as Claude Desktop, .mcp.json and VS Code name it. Without type or transport: stdio when command is given, auto when url is.',
          );
  return z
    .object({
      ...(type === undefined ? {} : { type }),
      transport: z.literal(kind).optional().describe('The transport by Interlock name; wins over `type`.'),
      ...shape,
      disabled: z.boolean().optional().describe('Claude Desktop spelling of `enabled: false`.'),
    })
    .strict()
    .describe(TRANSPORT_DOCS[kind] ?? kind);
}

/**
 * Options for a server that `mcpConfig` defines: any field but `command`, `url` and `type`, merged over the
 * definition there.
 */
function overlayVariant(): z.ZodType {
  const shape: Record<string, z.ZodType> = {};
  for (const variant of MCPServerConfigSchema.options) {
    for (const [key, field] of Object.entries(variant.shape as Record<string, z.ZodType>)) {
      if (key === 'name' || key === 'command' || key === 'url' || key in shape) continue;
      shape[key] =
        key === 'transport'
          ? z
              .enum(
                MCPServerConfigSchema.options.map((o) => o.shape.transport.value) as [string, ...string[]],
              )
              .optional()
              .describe('Changes the transport of the server from mcpConfig.')
          : documented(field, `.${key}`).optional();
    }
  }
  shape.disabled = z.boolean().optional().describe('Claude Desktop spelling of `enabled: false`.');
  return z.object(shape).strict().describe('Options added to a server of mcpConfig with the same name.');
}

/** One server entry, any transport (for editors and the reference page). */
export const ServerEntrySchema: z.ZodType = z
  .union([...MCPServerConfigSchema.options.map(entryVariant), overlayVariant()] as unknown as [
    z.ZodType,
    z.ZodType,
    ...z.ZodType[],
  ])
  .describe(
    'An MCP server: `command` (and `args`, `env`) for a local one, `url` (and `headers`) for a remote one, plus per-server options.',
  );

const ServerName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,40}$/, 'a server name is 1-40 characters of A-Z, a-z, 0-9, _ and -');

const FilePath = z.string().min(1, 'must not be empty');

/** `state`: where quotas shared by many processes are counted. */
export const StateConfigSchema = z
  .strictObject({
    redis: RedisStateStoreOptionsSchema.describe(
      'A Redis (or Valkey) server: `url` (redis:// or rediss://), `keyPrefix`, `tls` ({ ca, cert, key, servername }), `connectTimeoutMs`, `commandTimeoutMs`. Write the password as a variable reference.',
    ),
  })
  .describe(
    'Shared state for many processes and hosts: maxCalls quotas of the policy are counted there, so they hold across every process that uses the same Redis and keyPrefix.',
  );

/** `{ file }`: a policy kept in its own JSON or YAML file. */
export const PolicyFileRefSchema = z
  .strictObject({
    file: FilePath.describe('Path of a JSON or YAML policy file, relative to this file.'),
  })
  .describe('A policy kept in a separate JSON or YAML file.');

/** `{ path, rename }`: an existing mcp.json, with names Interlock cannot use mapped to ones it can. */
export const McpConfigRefSchema = z
  .strictObject({
    path: FilePath.describe('Path of the mcp.json, relative to this file.'),
    rename: z
      .record(z.string().min(1), ServerNameSchema)
      .optional()
      .describe(
        'New names for servers of that file, by the name written there: { "my.server": "my_server" }. The new name is the one policies, tool names (mcp__my_server__echo) and option entries in mcpServers use.',
      ),
  })
  .describe('An existing mcp.json, with some of its servers renamed.');

function projectSchema(
  entries: z.ZodType,
  policy: z.ZodType,
  name: z.ZodString,
  sections: { network: z.ZodType; http: z.ZodType; state: z.ZodType },
) {
  return z
    .strictObject({
      $schema: z.string().optional().describe('The JSON Schema of this file, for editors.'),
      version: z.literal(CONFIG_VERSION).optional().describe('Format version of this file. Default 1.'),
      mcpServers: z
        .record(name, entries)
        .optional()
        .describe('Servers by name, in the Claude Desktop / .mcp.json shape.'),
      servers: z
        .record(name, entries)
        .optional()
        .describe("Servers by name, in VS Code's mcp.json shape (use this or mcpServers, not both)."),
      mcpConfig: z
        .union([FilePath, McpConfigRefSchema])
        .optional()
        .describe(
          'An existing mcp.json (Claude Desktop, Cursor, .mcp.json or VS Code) whose servers are used too: its path relative to this file, or { path, rename }. An entry in mcpServers with the same name and no command or url adds options to that server.',
        ),
      policy: policy
        .optional()
        .describe(
          'The capability policy every call is checked against: inline, or { file }. Without one every call is denied.',
        ),
      pins: z
        .strictObject({
          file: FilePath.optional().describe(
            `Pin file path, relative to this file. Default ${DEFAULT_PINS_FILE}.`,
          ),
        })
        .optional()
        .describe('Where tool definitions are pinned (the rug-pull defense).'),
      audit: z
        .strictObject({
          file: FilePath.describe('JSON-lines file every decision is appended to, relative to this file.'),
        })
        .optional()
        .describe('Where the audit trail of capability decisions goes.'),
      network: sections.network.optional(),
      http: sections.http.optional(),
      state: sections.state.optional(),
      agent: z
        .string()
        .min(1)
        .max(128)
        .optional()
        .describe(`The agent name used in policy conditions and audit records. Default ${DEFAULT_AGENT}.`),
    })
    .meta({
      title: 'Interlock project file',
      description:
        'interlock.config.yaml / interlock.config.json: MCP servers, per-server options, the capability policy, pins and audit.',
    });
}

/** The whole project file, for editors (the JSON Schema) and docs. */
export const InterlockConfigSchema = projectSchema(
  ServerEntrySchema,
  z.union([PolicyDocSchema, PolicyFileRefSchema]),
  ServerName,
  { network: NetworkConfigSchema, http: HttpConfigSchema, state: StateConfigSchema },
);

/** The file as validated at the top level; server entries and the policy are checked by their own parsers. */
export const ProjectFileShapeSchema = projectSchema(z.unknown(), z.unknown(), z.string(), {
  network: z.unknown(),
  http: z.unknown(),
  state: z.unknown(),
});

/** What a project file holds, as written. */
export type InterlockConfigInput = z.input<typeof InterlockConfigSchema>;
