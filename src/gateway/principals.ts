/**
 * Who is calling the gateway (issue 17). On HTTP a bearer credential is verified here: a JWT access token
 * against the configured issuer's keys, with the gateway's resource URL as audience (MCP authorization spec,
 * RFC 8707/9068), or a static API key. The result is a {@link Principal}; the token itself goes no further
 * (never upstream: no token passthrough).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import {
  type AuthInfo,
  OAuthError,
  OAuthErrorCode,
  type OAuthTokenVerifier,
} from '@modelcontextprotocol/server';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  type JWTPayload,
  errors as joseErrors,
  jwtVerify,
} from 'jose';
import type { ApiKeyConfig, AuthMethod, JwtAuthConfig, PrincipalMatch } from '../config/gateway.js';

/** A verified caller. */
export interface Principal {
  /** The subject: a user, a service account, or `local` on stdio. */
  readonly subject: string;
  /** The OAuth client the token was issued to, when known. */
  readonly clientId?: string | undefined;
  readonly groups: readonly string[];
  readonly scopes: readonly string[];
  /** How it was verified. */
  readonly via: 'jwt' | 'api-key' | 'mtls' | 'stdio' | 'none';
}

/** The binding key of each way of authenticating; `none` (an anonymous loopback caller) has none. */
const METHOD_OF: Record<Principal['via'], AuthMethod | undefined> = {
  jwt: 'jwt',
  'api-key': 'apiKey',
  mtls: 'mtls',
  stdio: 'stdio',
  none: undefined,
};

/**
 * Whether `match` names `principal` (issue 38): only the names listed under the method it authenticated with
 * count, so a JWT whose `sub` is `ci-bot` never matches what was written for the API key `ci-bot`. The shorthand
 * names (no method) count for `shorthand`, the one method the gateway has, if any.
 */
export function principalMatches(
  match: PrincipalMatch,
  principal: Principal,
  shorthand: AuthMethod | undefined,
): boolean {
  const method = METHOD_OF[principal.via];
  if (method === undefined) return false;
  const names: {
    subjects?: readonly string[] | undefined;
    clients?: readonly string[] | undefined;
    groups?: readonly string[] | undefined;
    scopes?: readonly string[] | undefined;
  } = match[method] ?? {};
  const flat = method === shorthand ? match : {};
  const listed = (key: 'subjects' | 'clients' | 'groups' | 'scopes') => [
    ...(names[key] ?? []),
    ...(flat[key] ?? []),
  ];
  if (listed('subjects').includes(principal.subject)) return true;
  if (principal.clientId !== undefined && listed('clients').includes(principal.clientId)) return true;
  if (listed('groups').some((g) => principal.groups.includes(g))) return true;
  if (listed('scopes').some((s) => principal.scopes.includes(s))) return true;
  return false;
}

/** Asymmetric JWS algorithms: a gateway never accepts HMAC tokens signed with a shared secret by default. */
const DEFAULT_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
];

/** The principal a verified token stands for, as stored on `AuthInfo.extra`. */
export function principalOf(authInfo: AuthInfo | undefined): Principal | undefined {
  const principal = authInfo?.extra?.principal;
  return principal === undefined ? undefined : (principal as Principal);
}

/** Options of {@link createPrincipalVerifier}. */
export interface PrincipalVerifierOptions {
  apiKeys?: readonly ApiKeyConfig[] | undefined;
  jwt?: JwtAuthConfig | undefined;
  /** The gateway's resource URL: the default audience, and what `AuthInfo.resource` reports. */
  resourceUrl: URL;
  /** Fetches the JWKS (tests and the guarded HTTP stack); default: global fetch. */
  fetch?: typeof fetch | undefined;
}

/**
 * A token verifier for the SDK's bearer-auth helpers: API keys first (constant-time compare of their hashes),
 * then JWTs. Anything else is `invalid_token` (401 with a `WWW-Authenticate` challenge).
 */
export function createPrincipalVerifier(options: PrincipalVerifierOptions): OAuthTokenVerifier {
  const keys = (options.apiKeys ?? []).map((k) => ({ hash: sha256(k.key), config: k }));
  const jwt = options.jwt === undefined ? undefined : jwtVerifier(options.jwt, options);
  return {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      const presented = sha256(token);
      for (const { hash, config } of keys) {
        if (timingSafeEqual(hash, presented)) {
          const principal: Principal = {
            subject: config.subject,
            groups: config.groups ?? [],
            scopes: config.scopes ?? [],
            via: 'api-key',
          };
          return {
            token,
            clientId: config.subject,
            scopes: [...principal.scopes],
            // API keys do not expire; the SDK's bearer check needs a time, so one far ahead is given.
            expiresAt: Math.floor(Date.now() / 1000) + 3600,
            resource: options.resourceUrl,
            extra: { principal },
          };
        }
      }
      if (jwt === undefined || !looksLikeJwt(token)) {
        throw new OAuthError(OAuthErrorCode.InvalidToken, 'Unknown access token.');
      }
      return jwt(token);
    },
  };
}

/** The caller a verified client certificate names: its subject CN, with its OUs as groups. */
export function principalFromCertificate(
  subject: Record<string, string | string[]> | undefined,
): Principal | undefined {
  const cn = subject?.CN;
  const common = Array.isArray(cn) ? cn[0] : cn;
  if (common === undefined || common === '') return undefined;
  const ou = subject?.OU;
  return {
    subject: common,
    groups: ou === undefined ? [] : Array.isArray(ou) ? ou : [ou],
    scopes: [],
    via: 'mtls',
  };
}

function jwtVerifier(
  config: JwtAuthConfig,
  options: PrincipalVerifierOptions,
): (token: string) => Promise<AuthInfo> {
  const keySet =
    config.jwks !== undefined
      ? createLocalJWKSet(config.jwks as Parameters<typeof createLocalJWKSet>[0])
      : createRemoteJWKSet(new URL(config.jwksUrl as string), {
          ...(options.fetch === undefined ? {} : { [customFetch]: options.fetch }),
        });
  const audience = config.audience ?? options.resourceUrl.href;
  return async (token) => {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keySet, {
        issuer: config.issuer,
        audience,
        algorithms: config.algorithms ?? DEFAULT_ALGORITHMS,
        clockTolerance: config.clockToleranceSeconds,
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (err) {
      throw new OAuthError(OAuthErrorCode.InvalidToken, jwtFailure(err));
    }
    const scopes = scopesOf(payload);
    const clientId = stringClaim(payload.client_id) ?? stringClaim(payload.azp);
    const principal: Principal = {
      subject: payload.sub as string,
      clientId,
      groups: stringList(payload[config.groupsClaim]),
      scopes,
      via: 'jwt',
    };
    return {
      token,
      clientId: clientId ?? (payload.sub as string),
      scopes,
      expiresAt: payload.exp as number,
      // The audience was checked above; the SDK compares this with the gateway's resource URL again.
      resource: options.resourceUrl,
      extra: { principal },
    };
  };
}

/** A reason a client can act on, without echoing the token. */
function jwtFailure(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return 'The access token has expired.';
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    if (err.claim === 'aud') return 'The access token was not issued for this gateway (audience).';
    if (err.claim === 'iss') return 'The access token was not issued by the trusted authorization server.';
    return `The access token's '${err.claim}' claim is not acceptable.`;
  }
  if (
    err instanceof joseErrors.JWSSignatureVerificationFailed ||
    err instanceof joseErrors.JWKSNoMatchingKey
  ) {
    return 'The access token signature does not verify against the issuer keys.';
  }
  if (err instanceof joseErrors.JOSEAlgNotAllowed)
    return 'The access token uses an algorithm that is not accepted.';
  if (err instanceof joseErrors.JWKSTimeout || err instanceof joseErrors.JOSEError) {
    return 'The access token could not be verified.';
  }
  return 'The access token could not be verified.';
}

function scopesOf(payload: JWTPayload): string[] {
  if (typeof payload.scope === 'string') return payload.scope.split(' ').filter((s) => s !== '');
  return stringList(payload.scp);
}

function stringList(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function stringClaim(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function looksLikeJwt(token: string): boolean {
  return token.split('.').length === 3;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
