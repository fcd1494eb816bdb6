/**
 * The project file (`interlock.config.yaml` or `.json`, issue 6): servers in the Claude Desktop / `.mcp.json`
 * shape (or VS Code's `servers`), per-server options, a capability policy, and where pins and audit records go.
 *
 * The server entries are derived from the interop schemas (`MCPServerConfigSchema`), so a field added there
 * (reconnect, idempotent tools, ...) is accepted and documented here without a change: descriptions live on
 * those schemas (`.describe()`), the one source of the reference pages and the JSON Schema. Validation of server
 * entries goes through `parseMCPConfig`, the same code that reads `mcp.json`; the policy goes through its schema
 * (`PolicySchema`), which checks everything a capability set would. {@link InterlockConfigSchema} describes the
 * whole file for editors (the shipped JSON Schema) and for the reference page.
 */
import { z } from 'zod';
import { policySchemas } from '../security/policy.js';
import { recordingSchemas } from '../security/recording.js';
import { QuotaLeaseSchema, RedisStateStoreOptionsSchema } from '../state/options.js';
import { GatewayConfigSchema } from './gateway.js';
import { serverSchemas } from './servers.js';

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

// The project file's schema is built when this module loads (it is what the config entry is for).
const { HttpConfigSchema, MCPServerConfigSchema, NetworkConfigSchema, ServerNameSchema } = serverSchemas();

/** `type` values accepted for each transport, as Claude Desktop, `.mcp.json` and VS Code write them. */
export const TRANSPORT_TYPE_ALIASES: Readonly<Record<string, readonly string[]>> = Object.freeze({
  stdio: ['stdio'],
  sse: ['sse'],
  http: ['http', 'streamable-http', 'streamableHttp', 'streamable_http'],
  auto: [],
});

type Variant = (typeof MCPServerConfigSchema.options)[number];

/** One entry of `mcpServers` for one transport: the interop fields minus `name`, plus the file-format aliases. */
function entryVariant(variant: Variant): z.ZodType {
  const { name: _name, transport, ...fields } = variant.shape as Record<string, z.ZodType>;
  const kind = (transport as z.ZodLiteral<string>).value;
  const shape: Record<string, z.ZodType> = {};
  for (const [key, field] of Object.entries(fields)) shape[key] = field;
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
    .describe(variant.description ?? kind);
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
          : field.optional();
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

/** `state`: where quotas, pins and OAuth tokens shared by many processes are kept. */
export const StateConfigSchema = z
  .strictObject({
    redis: RedisStateStoreOptionsSchema.describe(
      'A Redis (or Valkey) server; write its password as a variable reference.',
    ),
    quotaFallback: z
      .union([
        z.literal('deny'),
        z.strictObject({
          localShare: z
            .strictObject({
              replicas: z
                .number()
                .int()
                .min(1)
                .describe(
                  'How many processes share the quota: each gives at most its share while Redis is away.',
                ),
            })
            .describe('Each process gives at most its share of what was left, until Redis answers again.'),
        }),
      ])
      .default('deny')
      .describe(
        "What a quota does while Redis cannot answer: 'deny' (fail closed), or { localShare: { replicas: N } } (each of N processes gives its share of what was left).",
      ),
    quotaLease: QuotaLeaseSchema.optional(),
    policy: z
      .strictObject({
        name: z
          .string()
          .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'a policy name is 1-64 characters of A-Z, a-z, 0-9, _, . and -')
          .describe(
            "The shared policy's name in the store: processes that name the same policy decide alike.",
          ),
        requireReview: z
          .boolean()
          .default(false)
          .describe(
            '`interlock policy publish` refuses unless given `--reviewed HASH`: the review hash `interlock policy diff --against RECORDING` printed for this policy and recording (audit.record.file, or `--against`). Default false.',
          ),
      })
      .optional()
      .describe(
        "Decide with a policy shared through Redis: the file's policy is published as its first version; `interlock policy publish` and `interlock policy revoke ID` change it for every process at once.",
      ),
  })
  .describe(
    'Shared state for many processes and hosts: maxCalls quotas of the policy are counted there, tool pins and OAuth tokens are kept there, so they hold across every process that uses the same Redis and keyPrefix.',
  );

/** Sinks of the project file's `audit` section that can chain their records. */
export const AUDIT_CHAIN_SINKS = ['file', 'stream', 'openTelemetryLogs'] as const;

/** `audit.chain.key`: where the key that signs checkpoints comes from (never the key itself). */
export const AuditChainKeyConfigSchema = z
  .union([
    z.strictObject({
      hmacSecretEnv: z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')
        .describe('Name of the environment variable that holds the HMAC-SHA256 secret (32 bytes or more).'),
    }),
    z.strictObject({
      hmacSecretFile: FilePath.describe(
        'File holding the HMAC-SHA256 secret (32 bytes or more; a final newline is ignored), relative to this file.',
      ),
    }),
    z.strictObject({
      ed25519PrivateKeyFile: FilePath.describe(
        'PEM file of the Ed25519 private key checkpoints are signed with, relative to this file.',
      ),
      ed25519PublicKeyFile: FilePath.optional().describe(
        'PEM file of its public key: interlock audit verify uses it where the private key is not present.',
      ),
    }),
  ])
  .describe(
    'The key checkpoints are signed with: { hmacSecretEnv }, { hmacSecretFile } or { ed25519PrivateKeyFile }.',
  );

/** `audit.chain`: tamper-evident audit records (issue 40). */
export const AuditChainConfigSchema = z
  .strictObject({
    key: AuditChainKeyConfigSchema,
    checkpointEvery: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('Records between two signed checkpoints. Default 100.'),
    checkpointSeconds: z
      .number()
      .min(0.01)
      .optional()
      .describe('Seconds after which new records get a checkpoint even if fewer were written. Default 60.'),
    sinks: z
      .array(z.enum(AUDIT_CHAIN_SINKS))
      .min(1)
      .optional()
      .describe('Which sinks chain their records. Default: every sink this section configures.'),
  })
  .describe(
    'Chain the audit records: each carries the hash of the one before, with signed checkpoints every N records, every T seconds and on close; `interlock audit verify` checks them.',
  );

/** `audit`: where the audit trail of capability decisions goes. */
export const AuditConfigSchema = z
  .strictObject({
    file: FilePath.optional().describe(
      'JSON-lines file every decision is appended to, relative to this file.',
    ),
    stream: z
      .union([
        z.literal(true),
        z.strictObject({
          name: z
            .string()
            .regex(
              /^[A-Za-z0-9_.:-]{1,64}$/,
              'a stream name is 1-64 characters of A-Z, a-z, 0-9, _, ., : and -',
            )
            .optional()
            .describe("The stream's name under state.redis.keyPrefix. Default audit."),
          maxLength: z
            .number()
            .int()
            .min(1)
            .optional()
            .describe('How many entries the stream keeps (approximately). Default 10000.'),
        }),
      ])
      .optional()
      .describe(
        'Append every decision to a Redis stream of the fleet (needs state.redis): true, or { name, maxLength }.',
      ),
    openTelemetryLogs: z
      .boolean()
      .optional()
      .describe(
        'Emit every decision as an OpenTelemetry log record (event interlock.capability.decision) through the logger provider the process registered.',
      ),
    chain: AuditChainConfigSchema.optional(),
    record: recordingSchemas()
      .options.optional()
      .describe(
        "Record each decision's inputs (argument values only where `keep` allows; a keyed digest elsewhere) for `interlock policy diff --against FILE`. `file` is relative to this file.",
      ),
  })
  .describe('Where the audit trail of capability decisions goes.');

/** `{ file }`: a policy kept in its own JSON or YAML file. */
export const PolicyFileRefSchema = z
  .strictObject({
    file: FilePath.describe(
      'Path of a JSON or YAML policy file, or of a Cedar policy (a name ending in .cedar), relative to this file.',
    ),
  })
  .describe('A policy kept in a separate JSON or YAML file, or a Cedar policy in a `.cedar` file.');

/** `{ cedar }`: a Cedar policy written inline (issue 40). */
export const CedarPolicyRefSchema = z
  .strictObject({
    cedar: z
      .string()
      .min(1)
      .describe(
        "A Cedar policy set, validated against Interlock's Cedar schema (schema/interlock.cedarschema) at load.",
      ),
  })
  .describe('A policy written in Cedar instead of native rules.');

/** `{ path, rename }`: an existing mcp.json, with names Interlock cannot use mapped to ones it can. */
export const McpConfigRefSchema = z
  .strictObject({
    path: FilePath.describe('Path of the mcp.json, relative to this file.'),
    rename: z
      .record(z.string().min(1), ServerNameSchema)
      .optional()
      .describe(
        'New names for servers of that file, by the name written there: { "my.server": "my_server" }. The new name is the one policies, tool names (`mcp__my_server__echo`) and option entries in mcpServers use.',
      ),
  })
  .describe('An existing mcp.json, with some of its servers renamed.');

function projectSchema(
  entries: z.ZodType,
  policy: z.ZodType,
  name: z.ZodString,
  sections: { network: z.ZodType; http: z.ZodType; state: z.ZodType; gateway: z.ZodType; audit: z.ZodType },
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
      audit: sections.audit.optional(),
      network: sections.network.optional(),
      http: sections.http.optional(),
      state: sections.state.optional(),
      gateway: sections.gateway.optional(),
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
  z.union([policySchemas().policy, PolicyFileRefSchema, CedarPolicyRefSchema]),
  ServerName,
  {
    network: NetworkConfigSchema,
    http: HttpConfigSchema,
    state: StateConfigSchema,
    gateway: GatewayConfigSchema,
    audit: AuditConfigSchema,
  },
);

/** The file as validated at the top level; server entries and the policy are checked by their own parsers. */
export const ProjectFileShapeSchema = projectSchema(z.unknown(), z.unknown(), z.string(), {
  network: z.unknown(),
  http: z.unknown(),
  state: z.unknown(),
  gateway: z.unknown(),
  audit: z.unknown(),
});

/** What a project file holds, as written. */
export type InterlockConfigInput = z.input<typeof InterlockConfigSchema>;
