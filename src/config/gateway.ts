/**
 * The gateway's options (issue 17), one zod schema that is also the project file's `gateway` section: who may
 * call (API keys for development, JWT access tokens from an OAuth authorization server), which rules each
 * caller gets (bindings from principals to rules derived from the project's policy, so a binding can never
 * grant more than the policy), how tools are named downstream, and where the HTTP endpoint listens.
 */

import { z } from 'zod';
import { policySchemas } from '../security/policy.js';
import { GatewayConsoleOptionsSchema } from './gateway-console.js';
import { GatewayFlowOptionsSchema } from './gateway-flow.js';
import { ServerRequestRelayOptionsSchema } from './gateway-relay.js';
import { GatewayReplicasOptionsSchema } from './gateway-replicas.js';
import { FailedAttemptsSchema, TrustedProxiesSchema } from './gateway-throttle.js';

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
    failedAttempts: FailedAttemptsSchema,
  })
  .describe('Who may call the HTTP endpoint. stdio callers are the local user (see `stdio`).');

/** Names a principal has within one way of authenticating. */
const methodMatch = <S extends z.core.$ZodLooseShape>(shape: S, what: string) =>
  z.strictObject(shape).refine((m) => Object.keys(m).length > 0, {
    message: `list at least one of ${Object.keys(shape).join(', ')} for ${what}`,
  });

const Subjects = (what: string) => Names.optional().describe(what);
const Groups = (what: string) => Names.optional().describe(what);

/**
 * Which principals a binding applies to, by how they authenticated (issue 38): a JWT with `sub: ci-bot` is not
 * the API key whose subject is `ci-bot`, so each name is written under its method. Any listed name matches.
 */
export const PrincipalMatchSchema = z
  .strictObject({
    jwt: methodMatch(
      {
        subjects: Subjects('Token subjects (the `sub` claim).'),
        clients: Names.optional().describe('OAuth client ids (`client_id` or `azp` of a token).'),
        groups: Groups('Groups from the groups claim.'),
        scopes: Names.optional().describe('Scopes the token carries.'),
      },
      'jwt',
    )
      .optional()
      .describe('Callers with a JWT access token from `auth.jwt`.'),
    apiKey: methodMatch(
      {
        subjects: Subjects("API keys' subjects."),
        groups: Groups("API keys' groups."),
        scopes: Names.optional().describe("API keys' scopes."),
      },
      'apiKey',
    )
      .optional()
      .describe('Callers with a key from `auth.apiKeys`.'),
    mtls: methodMatch(
      {
        subjects: Subjects("Client certificates' subject CN."),
        groups: Groups("Client certificates' OUs."),
      },
      'mtls',
    )
      .optional()
      .describe('Callers with a client certificate (`http.tls.clientCertificates`).'),
    stdio: methodMatch(
      {
        subjects: Subjects('The stdio subject (`stdio.subject`).'),
        groups: Groups('The stdio groups (`stdio.groups`).'),
      },
      'stdio',
    )
      .optional()
      .describe('The local client on stdio.'),
    subjects: Names.optional().describe(
      'Shorthand for the one way of authenticating the gateway has (see `jwt`, `apiKey`, `mtls`, `stdio`); refused when it has several.',
    ),
    clients: Names.optional().describe('Shorthand: OAuth client ids, when `auth.jwt` is the only way in.'),
    groups: Names.optional().describe('Shorthand: groups, for the one way of authenticating.'),
    scopes: Names.optional().describe('Shorthand: scopes, for the one way of authenticating.'),
  })
  .refine((m) => Object.keys(m).length > 0, {
    message: 'a binding needs at least one of jwt, apiKey, mtls or stdio',
  });

/** How a caller proved who it is, as a binding names it. */
export type AuthMethod = 'jwt' | 'apiKey' | 'mtls' | 'stdio';

/** The names a match lists without a method (the shorthand form). */
export const SHORTHAND_KEYS = ['subjects', 'clients', 'groups', 'scopes'] as const;

/** Rules for the principals a binding matches; narrowed from the project's policy, never wider. */
export const PrincipalBindingSchema = z
  .strictObject({
    match: PrincipalMatchSchema.describe(
      'Whom the rules apply to, by how they authenticated: any listed subject, client, group or scope of that method.',
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
    operators: PrincipalMatchSchema.optional().describe(
      'Who may read `/metrics` on a gateway with `auth` or client certificates: the principals this matches. Without it nobody may; a gateway without either serves `/metrics` to the loopback callers it serves.',
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
        allowedOrigins: z
          .array(
            z.url().refine((u) => new URL(u).origin === u, {
              message: 'an origin is scheme://host[:port], without a path or a trailing slash',
            }),
          )
          .optional()
          .describe(
            "Browser origins (`https://app.example.com`) that may call the endpoint, besides the resource URL's own origin and, on a loopback listener, loopback origins. A request with any other `Origin` header is refused (403).",
          ),
        tls: GatewayTlsSchema.optional(),
        trustedProxies: TrustedProxiesSchema.optional(),
      })
      .optional()
      .describe('The Streamable HTTP endpoint of `interlock serve --http`.'),
    serverRequests: ServerRequestRelayOptionsSchema.optional().describe(
      "Elicitation and sampling requests of upstream servers, relayed to the caller whose call made them: how long a call waits for its caller's answer, how many calls may wait at once, which servers' requests that name no call may still be routed.",
    ),
    flow: GatewayFlowOptionsSchema.optional().describe(
      'Information flow per caller (issue 42): the flow state of each stdio session or authenticated HTTP caller, which flow rules decide on: how many are held at once, how long an idle one is kept, how much text each indexes.',
    ),
    console: GatewayConsoleOptionsSchema.optional(),
    replicas: GatewayReplicasOptionsSchema.optional(),
    drainTimeoutMs: z
      .number()
      .int()
      .min(0)
      .max(600_000)
      .default(DEFAULT_DRAIN_TIMEOUT_MS)
      .describe('How long a graceful shutdown waits for requests in flight, in milliseconds.'),
  })
  .superRefine((config, ctx) => {
    // Issue 38: a name without its method is accepted only where one way of authenticating exists.
    const method = shorthandMethod(config);
    const matches = [
      ...(config.principals ?? []).map((b, i) => ({ match: b.match, path: ['principals', i, 'match'] })),
      ...(config.operators === undefined ? [] : [{ match: config.operators, path: ['operators'] }]),
    ];
    for (const { match, path } of matches) {
      for (const key of SHORTHAND_KEYS) {
        if (match[key] === undefined) continue;
        if (method === undefined) {
          ctx.addIssue({
            code: 'custom',
            path: [...path, key],
            message: `the gateway has several ways to authenticate (${configuredMethods(config).join(', ')}), so '${key}' alone is ambiguous: the same name can come from a JWT and from an API key. Write it under the method, e.g. { apiKey: { ${key}: [...] } } or { jwt: { ${key}: [...] } }`,
          });
        } else if (key === 'clients' && method !== 'jwt') {
          ctx.addIssue({
            code: 'custom',
            path: [...path, key],
            message:
              'only JWT callers have an OAuth client id; write { jwt: { clients: [...] } } with auth.jwt',
          });
        }
      }
    }
  })
  .describe('`interlock serve`: the project as one MCP server for any client, every call gated per caller.');

/** The ways a caller can authenticate to a gateway with this config (stdio when no HTTP way is configured). */
export function configuredMethods(config: {
  auth?: { jwt?: unknown; apiKeys?: readonly unknown[] | undefined } | undefined;
  http?: { tls?: { clientCertificates?: string } | undefined } | undefined;
}): AuthMethod[] {
  const methods: AuthMethod[] = [];
  if (config.auth?.jwt !== undefined) methods.push('jwt');
  if ((config.auth?.apiKeys?.length ?? 0) > 0) methods.push('apiKey');
  const certificates = config.http?.tls?.clientCertificates;
  if (certificates !== undefined && certificates !== 'none') methods.push('mtls');
  return methods.length === 0 ? ['stdio'] : methods;
}

/** The method a shorthand match (`subjects` without a method) stands for; `undefined` when ambiguous. */
export function shorthandMethod(config: Parameters<typeof configuredMethods>[0]): AuthMethod | undefined {
  const methods = configuredMethods(config);
  return methods.length === 1 ? methods[0] : undefined;
}

export type GatewayConfig = z.output<typeof GatewayConfigSchema>;
export type GatewayConfigInput = z.input<typeof GatewayConfigSchema>;
export type PrincipalBinding = z.output<typeof PrincipalBindingSchema>;
export type PrincipalMatch = z.output<typeof PrincipalMatchSchema>;
export type JwtAuthConfig = z.output<typeof JwtAuthSchema>;
export type ApiKeyConfig = z.output<typeof ApiKeySchema>;
export type GatewayTlsConfig = z.output<typeof GatewayTlsSchema>;
