/**
 * The gateway's options (issue 17), one zod schema that is also the project file's `gateway` section: who may
 * call (API keys for development, JWT access tokens from an OAuth authorization server), which rules each
 * caller gets (bindings from principals to rules derived from the project's policy, so a binding can never
 * grant more than the policy), how tools are named downstream, and where the HTTP endpoint listens.
 */
import { z } from 'zod';
import { policySchemas } from '../security/policy.js';
import { ServerRequestRelayOptionsSchema } from './relay-options.js';

/** Where `interlock serve --http` listens when neither the file nor the command line says. */
export const DEFAULT_GATEWAY_HOST = '127.0.0.1';
/** The MCP endpoint's path on the HTTP listener. */
export const DEFAULT_GATEWAY_PATH = '/mcp';
/** How long a graceful shutdown waits for calls in flight before it closes the upstream servers. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 10_000;

const Names = z.array(z.string().min(1).max(256)).min(1);

/** A static API key (development and service accounts); the key itself is a secret and is never printed. */
export const ApiKeySchema = z
  .strictObject({
    key: z
      .string()
      .min(16, 'an API key needs at least 16 characters; generate one with `openssl rand -hex 24`')
      .describe(
        'The key, sent as `Authorization: Bearer <key>`. Write it as a variable reference (dollar sign and braces) so it stays out of the file.',
      ),
    subject: z.string().min(1).max(256).describe('The principal this key stands for.'),
    groups: z.array(z.string().min(1)).optional().describe('Groups of the principal, for bindings.'),
    scopes: z.array(z.string().min(1)).optional().describe('Scopes of the principal, for bindings.'),
  })
  .describe('A static API key: for development and service accounts. Prefer JWT access tokens.');

/** JWT access tokens from an OAuth 2.1 authorization server, checked as the MCP authorization spec asks. */
export const JwtAuthSchema = z
  .strictObject({
    issuer: z.url().describe('The authorization server: the `iss` every token must carry.'),
    jwksUrl: z
      .url()
      .optional()
      .describe(
        "Where the issuer's signing keys are published (JWKS). Fetched and cached; rotated keys are refetched.",
      ),
    jwks: z
      .strictObject({
        keys: z.array(z.record(z.string(), z.unknown())).min(1).describe('The public keys (JWK).'),
      })
      .optional()
      .describe('The signing keys inline, instead of `jwksUrl`.'),
    audience: z
      .url()
      .optional()
      .describe("The `aud` tokens must name. Default: the gateway's resource URL (RFC 8707)."),
    algorithms: z
      .array(z.string().min(1))
      .optional()
      .describe('Accepted JWS algorithms. Default: the asymmetric ones (`RS*`, `PS*`, `ES*`, `EdDSA`).'),
    groupsClaim: z.string().min(1).default('groups').describe('The claim that lists the groups.'),
    requiredScopes: z
      .array(z.string().min(1))
      .optional()
      .describe('Scopes every token must have (403 insufficient_scope otherwise).'),
    clockToleranceSeconds: z
      .number()
      .int()
      .min(0)
      .max(300)
      .default(30)
      .describe('Clock skew allowed when checking exp, nbf and iat, in seconds.'),
  })
  .refine((v) => (v.jwksUrl === undefined) !== (v.jwks === undefined), {
    message: 'give exactly one of jwksUrl and jwks',
  })
  .describe('OAuth 2.1 resource server: JWT access tokens signed by `issuer`, for this gateway as audience.');

/** TLS for the HTTP listener, and client certificates as a way to authenticate (mTLS). */
export const GatewayTlsSchema = z
  .strictObject({
    cert: z.string().min(1).optional().describe('The server certificate chain, PEM.'),
    certFile: z
      .string()
      .min(1)
      .optional()
      .describe('A file with the server certificate chain (relative to the project file).'),
    key: z.string().min(1).optional().describe('The private key, PEM. Never printed.'),
    keyFile: z.string().min(1).optional().describe('A file with the private key.'),
    clientCa: z.string().min(1).optional().describe('CA certificates that sign client certificates, PEM.'),
    clientCaFile: z.string().min(1).optional().describe('A file with the client CA certificates.'),
    clientCertificates: z
      .enum(['none', 'optional', 'required'])
      .default('none')
      .describe(
        "'required': every connection must present a certificate signed by the client CA, and its subject names the caller; 'optional': a verified certificate names the caller, others use bearer credentials.",
      ),
  })
  .refine((t) => (t.cert === undefined) !== (t.certFile === undefined), {
    message: 'give exactly one of cert and certFile',
  })
  .refine((t) => (t.key === undefined) !== (t.keyFile === undefined), {
    message: 'give exactly one of key and keyFile',
  })
  .refine(
    (t) => t.clientCertificates === 'none' || t.clientCa !== undefined || t.clientCaFile !== undefined,
    {
      message: 'client certificates need clientCa or clientCaFile',
    },
  )
  .describe(
    'HTTPS for the gateway, and mTLS: a client certificate (CN the subject, OU the groups) names the caller.',
  );

/** How downstream clients prove who they are. */
export const GatewayAuthSchema = z
  .strictObject({
    apiKeys: z.array(ApiKeySchema).optional().describe('Static API keys, each naming a principal.'),
    jwt: JwtAuthSchema.optional(),
  })
  .describe('Who may call the HTTP endpoint. stdio callers are the local user (see `stdio`).');

/** Which principals a binding applies to: any listed subject, client, group or scope matches. */
export const PrincipalMatchSchema = z
  .strictObject({
    subjects: Names.optional().describe("Subjects (a token's sub, an API key's subject, a certificate CN)."),
    clients: Names.optional().describe('OAuth client ids (client_id or azp of a token).'),
    groups: Names.optional().describe("Groups (the groups claim, an API key's groups, certificate OUs)."),
    scopes: Names.optional().describe('Scopes the token carries.'),
  })
  .refine((m) => Object.keys(m).length > 0, {
    message: 'a binding needs at least one of subjects, clients, groups or scopes',
  });

/** Rules for the principals a binding matches; narrowed from the project's policy, never wider. */
export const PrincipalBindingSchema = z
  .strictObject({
    match: PrincipalMatchSchema.describe(
      'Whom the rules apply to: any listed subject, client, group or scope.',
    ),
    rules: z
      .array(policySchemas().rule)
      .describe(
        "Rules in the policy's format. They are derived from the project policy: a rule that asks for more than the policy allows is refused at start.",
      ),
  })
  .describe('Binds rules to principals.');

/** The `gateway` section of the project file, and the options of {@link createGateway}. */
export const GatewayConfigSchema = z
  .strictObject({
    naming: z
      .enum(['exposed', 'tool'])
      .default('exposed')
      .describe(
        "Tool names downstream: 'exposed' (`mcp__{server}__{tool}`), or 'tool' (the server's own name where it is unique, the exposed name where two servers share it).",
      ),
    auth: GatewayAuthSchema.optional(),
    principals: z
      .array(PrincipalBindingSchema)
      .optional()
      .describe(
        'Bindings from principals to rules. Without it every authenticated caller gets the whole project policy; with it a caller gets the rules of the bindings it matches, and nothing when it matches none.',
      ),
    stdio: z
      .strictObject({
        subject: z.string().min(1).max(256).default('local').describe('The subject of the stdio client.'),
        groups: z.array(z.string().min(1)).optional().describe('Its groups, for bindings.'),
      })
      .optional()
      .describe('The principal of the one client on stdio (the local user who started the gateway).'),
    http: z
      .strictObject({
        host: z.string().min(1).default(DEFAULT_GATEWAY_HOST).describe('The address to listen on.'),
        port: z.number().int().min(0).max(65_535).default(8080).describe('The port; 0 for any free one.'),
        path: z
          .string()
          .regex(/^\//, 'a path starts with /')
          .default(DEFAULT_GATEWAY_PATH)
          .describe('The path of the MCP endpoint.'),
        resourceUrl: z
          .url()
          .optional()
          .describe(
            'The public URL of the MCP endpoint (the token audience). Default: http://{host}:{port}{path}.',
          ),
        allowedHosts: z
          .array(z.string().min(1))
          .optional()
          .describe(
            'Host header values accepted (DNS-rebinding defense). Default: the resource URL host, and loopback names on a loopback listener.',
          ),
        tls: GatewayTlsSchema.optional(),
      })
      .optional()
      .describe('The Streamable HTTP endpoint of `interlock serve --http`.'),
    serverRequests: ServerRequestRelayOptionsSchema.optional().describe(
      "Elicitation and sampling requests of upstream servers, relayed to the caller whose call made them: how long a call waits for its caller's answer, how many calls may wait at once, which servers' requests that name no call may still be routed.",
    ),
    drainTimeoutMs: z
      .number()
      .int()
      .min(0)
      .max(600_000)
      .default(DEFAULT_DRAIN_TIMEOUT_MS)
      .describe('How long a graceful shutdown waits for requests in flight, in milliseconds.'),
  })
  .describe('`interlock serve`: the project as one MCP server for any client, every call gated per caller.');

export type GatewayConfig = z.output<typeof GatewayConfigSchema>;
export type GatewayConfigInput = z.input<typeof GatewayConfigSchema>;
export type PrincipalBinding = z.output<typeof PrincipalBindingSchema>;
export type JwtAuthConfig = z.output<typeof JwtAuthSchema>;
export type ApiKeyConfig = z.output<typeof ApiKeySchema>;
export type GatewayTlsConfig = z.output<typeof GatewayTlsSchema>;
