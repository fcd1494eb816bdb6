/**
 * The `token_exchange` kind of a remote server's `auth` (issue 41): the gateway's caller's identity reaches the
 * server as a token minted for it (RFC 8693 token exchange, the gateway as actor), or as a per-caller ID-JAG
 * redeemed at the server's authorization server. Built inside `serverSchemas()` at first use, never at import.
 */
import { z } from 'zod';

/** The token exchange schema, built when called. */
export function buildTokenExchangeSchema() {
  const Url = z.string().url('must be an absolute URL');
  const Secret = z.string().min(1);

  const IdJagSchema = z
    .object({
      issuer: Url.describe(
        "The issuer of the server's authorization server: the audience of the ID-JAG the identity provider issues.",
      ),
      tokenEndpoint: Url.describe(
        "The token endpoint of the server's authorization server (RFC 7523 grant).",
      ),
      clientId: z.string().min(1).describe("The gateway's client id at the server's authorization server."),
      clientSecret: Secret.optional().describe(
        "The gateway's client secret there. Reference an environment variable. Never printed.",
      ),
    })
    .strict()
    .describe(
      "Cross-app access per caller: the identity provider at tokenEndpoint exchanges the caller's token for an ID-JAG for this authorization server, which redeems it (RFC 7523) for the server's token.",
    );

  return z
    .object({
      type: z.literal('token_exchange').describe("Always 'token_exchange'."),
      tokenEndpoint: Url.optional().describe(
        "The token endpoint that exchanges the caller's token (RFC 8693); with idJag, the identity provider's.",
      ),
      issuer: Url.optional().describe(
        'The issuer of that authorization server; its token endpoint is discovered from its metadata (RFC 8414).',
      ),
      clientId: z.string().min(1).describe("The gateway's client id at that authorization server."),
      clientSecret: Secret.optional().describe(
        "The gateway's client secret (client_secret_basic). Reference an environment variable. Never printed.",
      ),
      audience: z
        .string()
        .min(1)
        .optional()
        .describe(
          "The audience of the exchanged token. Default: the server's URL (also sent as `resource`).",
        ),
      actorToken: Secret.optional().describe(
        "The gateway's own credential sent as actor_token (e.g. a workload JWT; reference an environment variable). Default: a client-credentials token of clientId. Never printed.",
      ),
      scopes: z
        .record(z.string().min(1), z.array(z.string().min(1)))
        .optional()
        .describe(
          "Scopes per tool pattern of this server (`*` wildcards), e.g. `{ 'issues_*': ['issues:read'] }`. The exchange asks for the union of the scopes of the tools the caller's rules could allow, nothing else. Default: no scope.",
        ),
      idJag: IdJagSchema.optional(),
      maxCachedTokens: z
        .number()
        .int()
        .min(1)
        .default(1000)
        .describe('Exchanged tokens kept in memory (per caller and audience; least recently used go first).'),
      maxConnections: z
        .number()
        .int()
        .min(1)
        .default(100)
        .describe(
          "A 2025-era server (one that gives sessions) gets one session per caller, opened with the caller's token: at most this many; beyond it the least recently used idle one is closed, and when all are busy a call is refused with OVERLOADED.",
        ),
      idleTimeoutMs: z
        .number()
        .int()
        .min(1)
        .default(300_000)
        .describe("A caller's session that has been idle this long is closed (HTTP DELETE)."),
      expirySkewMs: z
        .number()
        .int()
        .min(0)
        .default(30_000)
        .describe('An exchanged token is used until this long before it expires, then exchanged again.'),
    })
    .strict()
    .superRefine((auth, ctx) => {
      if (auth.tokenEndpoint === undefined && auth.issuer === undefined)
        ctx.addIssue({ code: 'custom', path: ['tokenEndpoint'], message: 'set tokenEndpoint or issuer' });
    })
    .describe(
      "The caller's identity for this server, through the gateway (issue 41): the caller's token exchanged (RFC 8693) for one whose audience is this server, the gateway as actor, scopes narrowed to the caller's rules; or, with idJag, a per-caller ID-JAG. The caller's own token is never sent. Secrets are never printed.",
    );
}
