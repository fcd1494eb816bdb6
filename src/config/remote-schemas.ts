/**
 * The remote half of the server-config schemas (issue 43: split from servers.ts): the URL and headers of a remote
 * server, its OAuth and cross-app access settings, the headers helper, TLS, the proxy, and the project file's
 * `network` and `http` sections. Built inside `serverSchemas()` at first use, never at import (issue 15).
 */
import { z } from 'zod';
import { buildTokenExchangeSchema } from './remote-identity.js';

/** The remote schemas, built when called. */
export function buildRemoteSchemas() {
  const HttpUrl = z
    .string()
    .url('must be an absolute URL')
    .refine((u) => !URL.canParse(u) || /^https?:$/.test(new URL(u).protocol), 'must use http: or https:');

  const HeaderName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be a valid HTTP header name');

  const IdpConfigSchema = z
    .object({
      issuer: z
        .string()
        .url()
        .optional()
        .describe("The identity provider's issuer; its token endpoint is discovered from its metadata."),
      tokenEndpoint: z
        .string()
        .url()
        .optional()
        .describe("The identity provider's token endpoint, when not discovered from issuer."),
      clientId: z.string().min(1).describe("This client's id at the identity provider."),
      clientSecret: z
        .string()
        .min(1)
        .optional()
        .describe("This client's secret at the identity provider. Never printed."),
      idToken: z
        .string()
        .min(1)
        .optional()
        .describe(
          "The user's ID token from the identity provider: reference an environment variable rather than writing it here (or pass idToken to createServerAuth). Never printed.",
        ),
    })
    .strict()
    .refine((idp) => idp.issuer !== undefined || idp.tokenEndpoint !== undefined, {
      message: 'set issuer or tokenEndpoint',
    })
    .describe('The enterprise identity provider of a cross-app access grant. Secrets are never printed.');

  const OAuthConfigSchema = z
    .object({
      type: z.literal('oauth').describe("Always 'oauth'."),
      grant: z
        .enum(['authorization_code', 'client_credentials', 'cross_app_access', 'jwt_bearer'])
        .default('authorization_code')
        .describe(
          "'authorization_code' (a user signs in), 'client_credentials' (machine to machine), 'cross_app_access' (an enterprise ID token exchanged for an ID-JAG, then a JWT bearer grant; needs idp) or 'jwt_bearer' (the workload's own JWT as the grant, RFC 7523; needs clientId).",
        ),
      assertion: z
        .string()
        .min(1)
        .optional()
        .describe(
          "For 'jwt_bearer' (workload identity federation): the workload's own JWT; reference an environment variable rather than writing it here. Never printed.",
        ),
      issuer: z
        .string()
        .url()
        .optional()
        .describe(
          'Issuer of the authorization server the configured clientId belongs to; the client id and secret go nowhere else. Default: the first one the server names.',
        ),
      dpop: z
        .boolean()
        .optional()
        .describe(
          'Bind tokens to a key held in memory and prove it on every request (DPoP, RFC 9449). Default false: bearer tokens.',
        ),
      idp: IdpConfigSchema.optional().describe(
        "For 'cross_app_access': the enterprise identity provider that exchanges an ID token for an ID-JAG.",
      ),
      clientId: z
        .string()
        .min(1)
        .optional()
        .describe('A pre-registered client id; without one the client registers dynamically (RFC 7591).'),
      clientSecret: z
        .string()
        .min(1)
        .optional()
        .describe('The client secret of a confidential client. Never printed.'),
      tokenEndpointAuthMethod: z
        .enum(['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'])
        .optional()
        .describe('How the client authenticates at the token endpoint.'),
      privateKey: z
        .string()
        .min(1)
        .optional()
        .describe('PEM (PKCS#8) private key for private_key_jwt. Never printed.'),
      signingAlgorithm: z
        .string()
        .min(1)
        .optional()
        .describe('JWS algorithm for private_key_jwt, e.g. RS256 or ES256.'),
      clientMetadataUrl: z
        .string()
        .url()
        .optional()
        .describe('HTTPS URL of a client ID metadata document, used as the client id.'),
      scope: z.string().min(1).optional().describe('Scopes to ask for when the server names none.'),
      redirectPort: z
        .number()
        .int()
        .min(0)
        .max(65_535)
        .optional()
        .describe('Fixed loopback port for the sign-in redirect. Default: any free port.'),
    })
    .strict()
    .superRefine((auth, ctx) => {
      if (auth.grant === 'jwt_bearer' && auth.clientId === undefined)
        ctx.addIssue({ code: 'custom', path: ['clientId'], message: 'jwt_bearer needs the client id' });
      if (auth.grant !== 'cross_app_access') return;
      if (auth.idp === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['idp'],
          message: 'cross_app_access needs the identity provider (idp)',
        });
      if (auth.clientId === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['clientId'],
          message: "cross_app_access needs the client id registered at the server's authorization server",
        });
    })
    .describe(
      'OAuth 2.1 for this server: authorization_code (a user signs in), client_credentials (machine to machine), cross_app_access (an enterprise ID token exchanged for an ID-JAG) or jwt_bearer (a workload JWT). Secrets are never printed.',
    );

  const HeadersHelperSchema = z
    .object({
      command: z.string().min(1).describe('The program to run (no shell).'),
      args: z.array(z.string()).default([]).describe('Its arguments.'),
    })
    .strict()
    .describe(
      'A command (no shell) printing a JSON object of headers; run again when the server answers 401. Output is never printed.',
    );

  const OneOrMore = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

  const ServerTlsSchema = z
    .object({
      ca: OneOrMore.optional().describe("Extra trusted CA certificates as PEM text, added to Node's roots."),
      caFile: OneOrMore.optional().describe('Files of extra trusted CA certificates (PEM).'),
      cert: z.string().min(1).optional().describe('Client certificate (PEM text) for mutual TLS.'),
      certFile: z.string().min(1).optional().describe('File of the client certificate (PEM) for mutual TLS.'),
      key: z
        .string()
        .min(1)
        .optional()
        .describe('Private key (PEM text) of the client certificate. Never printed.'),
      keyFile: z
        .string()
        .min(1)
        .optional()
        .describe('File of the private key (PEM) of the client certificate.'),
      passphrase: z.string().min(1).optional().describe('Passphrase of the private key. Never printed.'),
    })
    .strict()
    .superRefine((tls, ctx) => {
      for (const [a, b] of [
        ['cert', 'certFile'],
        ['key', 'keyFile'],
      ] as const) {
        if (tls[a] !== undefined && tls[b] !== undefined)
          ctx.addIssue({ code: 'custom', path: [b], message: `set ${a} or ${b}, not both` });
      }
      const hasCert = tls.cert !== undefined || tls.certFile !== undefined;
      const hasKey = tls.key !== undefined || tls.keyFile !== undefined;
      if (hasCert !== hasKey)
        ctx.addIssue({
          code: 'custom',
          path: [hasCert ? 'key' : 'cert'],
          message:
            'a client certificate needs both a certificate (cert or certFile) and its key (key or keyFile)',
        });
    })
    .describe(
      "TLS for this server on top of the manager's: extra CAs and a client certificate (mTLS), as PEM text or files. Never printed.",
    );

  const ServerProxySchema = z
    .union([z.enum(['env', 'none']), HttpUrl])
    .describe(
      "The proxy for this server: 'env' (HTTP_PROXY, HTTPS_PROXY, NO_PROXY), 'none', or a proxy URL.",
    );

  const NetworkConfigSchema = z
    .object({
      allowPrivate: z
        .boolean()
        .optional()
        .describe(
          'Allow loopback, private and CGNAT addresses. Link-local (cloud metadata) only through allowHosts.',
        ),
      allowHosts: z
        .array(z.string().min(1))
        .optional()
        .describe(
          'Hosts allowed whatever they resolve to: names, `*.suffix` wildcards, IP addresses or CIDR ranges.',
        ),
      denyHosts: z
        .array(z.string().min(1))
        .optional()
        .describe('Hosts always refused (same forms as allowHosts); deny wins over allow.'),
    })
    .strict()
    .describe(
      'The SSRF guard of every HTTP server, redirect and OAuth endpoint. Without it: loopback and private addresses allowed, link-local (cloud metadata) refused. With it: private, loopback and CGNAT refused unless allowPrivate or allowHosts says otherwise.',
    );

  const HttpConfigSchema = z
    .object({
      proxy: z
        .union([
          z.enum(['env', 'none']),
          HttpUrl,
          z
            .object({
              http: HttpUrl.optional().describe('Proxy for http: targets.'),
              https: HttpUrl.optional().describe('Proxy for https: targets.'),
              noProxy: z
                .string()
                .optional()
                .describe('Comma-separated hosts reached directly, as in NO_PROXY.'),
            })
            .strict(),
        ])
        .optional()
        .describe(
          "'env' (default: HTTP_PROXY, HTTPS_PROXY, NO_PROXY), 'none', one proxy URL, or { http, https, noProxy }.",
        ),
      proxyTarget: z
        .enum(['name', 'address'])
        .optional()
        .describe(
          "What a proxy CONNECT names: 'name' (default; the proxy resolves it) or 'address' (the address Interlock resolved and checked, which closes DNS rebinding through the proxy).",
        ),
      tls: ServerTlsSchema.optional().describe(
        'Extra CAs and a client certificate (mTLS) for every remote server; a server can add its own.',
      ),
      keepAliveTimeoutMs: z
        .number()
        .int()
        .min(0)
        .optional()
        .describe('How long idle pooled sockets are kept, in milliseconds. Default 10000.'),
      connections: z.number().int().min(1).optional().describe('Sockets per origin. Default 64.'),
    })
    .strict()
    .describe(
      "The HTTP stack every remote server shares: proxy ('env' by default: HTTP_PROXY, HTTPS_PROXY, NO_PROXY), extra CAs and a client certificate (mTLS), pooling.",
    );

  const TokenExchangeConfigSchema = buildTokenExchangeSchema();

  return {
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
  };
}
