/**
 * The built-in OAuth client for MCP servers (issue 9, MCP 2025-11-25 and 2026-07-28 "Authorization"), as an SDK
 * `OAuthClientProvider`: the SDK's `auth()` runs protected resource metadata discovery (RFC 9728), authorization
 * server metadata (RFC 8414 / OpenID discovery with its fallbacks), dynamic client registration (RFC 7591) or client
 * ID metadata documents, PKCE S256, the `resource` parameter (RFC 8707), scope selection, refresh and the `iss`
 * check of the authorization response (RFC 9207). This provider adds pluggable storage with client registrations
 * kept per authorization server issuer (issue 13), the client credentials grant (client secret basic/post or
 * private key JWT), the cross-app access grant (issue 13: an ID-JAG from the enterprise identity provider, RFC 8693,
 * then RFC 7523 JWT bearer) and step-up on `insufficient_scope` for every grant.
 */
import { randomBytes } from 'node:crypto';
import type {
  AddClientAuthentication,
  DpopSession,
  FetchLike,
  OAuthClientInformationContext,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import {
  createPrivateKeyJwtAuth,
  discoverAndRequestJwtAuthGrant,
  requestJwtAuthorizationGrant,
} from '@modelcontextprotocol/client';
import { AuthError, ConfigError } from '../errors.js';
import { MemoryTokenStore, type StoredOAuthState, type TokenStore } from './token-store.js';

/** RFC 7523 2.1: the JWT bearer grant that redeems an ID-JAG at the MCP server's authorization server. */
const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** The identity provider of a cross-app access grant, as the provider needs it. */
export interface CrossAppAccessOptions {
  /** The identity provider's issuer (its token endpoint is discovered), or give `tokenEndpoint`. */
  issuer?: string | undefined;
  tokenEndpoint?: string | undefined;
  /** This client's id at the identity provider. */
  clientId: string;
  clientSecret?: string | undefined;
  /** The user's ID token from the identity provider, fetched each time a grant is needed. Never logged. */
  idToken: () => string | Promise<string>;
}

/** How the client authenticates at the token endpoint. */
export type TokenEndpointAuthMethod =
  | 'client_secret_basic'
  | 'client_secret_post'
  | 'private_key_jwt'
  | 'none';

/** Options of {@link OAuthProvider}. */
export interface OAuthProviderOptions {
  /** The MCP server URL the tokens are for. Tokens are stored under it and sent nowhere else. */
  serverUrl: string;
  /** @default a new {@link MemoryTokenStore} */
  store?: TokenStore | undefined;
  /**
   * `authorization_code` (a user signs in), `client_credentials` (machine to machine), `cross_app_access` (an
   * ID-JAG from `crossAppAccess`'s identity provider) or `jwt_bearer` (a workload's own JWT from `assertion`, RFC
   * 7523, for workload identity federation). @default 'authorization_code'
   */
  grant?: 'authorization_code' | 'client_credentials' | 'cross_app_access' | 'jwt_bearer' | undefined;
  /**
   * For `jwt_bearer`: the workload's JWT (e.g. a Kubernetes service account token), read each time a token is
   * requested. Never logged.
   */
  assertion?: (() => string | Promise<string>) | undefined;
  /**
   * The issuer of the authorization server `clientId` is registered with: the configured client is sent to no
   * other. @default the first authorization server it is used with
   */
  issuer?: string | undefined;
  /** The identity provider for `cross_app_access`. */
  crossAppAccess?: CrossAppAccessOptions | undefined;
  /**
   * The DPoP key session (RFC 9449, MCP's SEP-1932): tokens are then bound to its key and presented with the DPoP
   * scheme and a fresh proof per request. Keep one per server for the life of the process. @default none: bearer
   */
  dpop?: (() => Promise<DpopSession>) | undefined;
  /** The fetch used for the identity provider (cross-app access). @default globalThis.fetch */
  fetch?: FetchLike | undefined;
  /** A pre-registered client. Without one the client registers dynamically or uses `clientMetadataUrl`. */
  clientId?: string | undefined;
  /** The pre-registered client's secret. Never logged. */
  clientSecret?: string | undefined;
  /** @default the registration's, else chosen from the server's supported methods */
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod | undefined;
  /** For `private_key_jwt`: PEM (PKCS#8) or a JWK object. */
  privateKey?: string | Uint8Array | Record<string, unknown> | undefined;
  /** For `private_key_jwt`. @default 'RS256' */
  signingAlgorithm?: string | undefined;
  /** An HTTPS URL of a client ID metadata document, used when the server supports them. */
  clientMetadataUrl?: string | undefined;
  /** Scopes to ask for when the server names none (`WWW-Authenticate`, then `scopes_supported` come first). */
  scope?: string | undefined;
  /** @default 'Interlock' */
  clientName?: string | undefined;
  /** The redirect URI for `authorization_code` (a loopback receiver's URL). */
  redirectUrl?: string | undefined;
  /** Opens the authorization URL (a browser). Required for `authorization_code`. */
  onAuthorizationUrl?: ((url: URL) => void | Promise<void>) | undefined;
  /** The clock that dates saved tokens (their `expiresAt`), in ms since the epoch. @default Date.now */
  clock?: (() => number) | undefined;
}

/** The key a server's state is stored under: the URL without query, fragment or credentials. */
export function tokenStoreKey(serverUrl: string | URL): string {
  const url = new URL(String(serverUrl));
  return `${url.origin}${url.pathname}`;
}

/** RFC 8414 issuers compared as the SDK does (SEP-2352): equal, or equal but for one trailing slash. */
export function sameIssuer(a: string, b: string): boolean {
  return a === b || a === `${b}/` || b === `${a}/`;
}

function mergeScopes(...scopes: (string | undefined)[]): string | undefined {
  const all = new Set<string>();
  for (const s of scopes) for (const part of s?.split(/\s+/) ?? []) if (part !== '') all.add(part);
  return all.size === 0 ? undefined : [...all].join(' ');
}

/** A missing or contradictory {@link OAuthProviderOptions} field: the caller's mistake (`INVALID_CONFIG`). */
function optionError(field: keyof OAuthProviderOptions, message: string): ConfigError {
  return new ConfigError(`OAuthProvider options: ${message}; set ${field}.`, {
    issues: [{ path: field, message }],
  });
}

/** An SDK `OAuthClientProvider` backed by a {@link TokenStore}. */
export class OAuthProvider implements OAuthClientProvider {
  readonly key: string;
  readonly #options: OAuthProviderOptions;
  readonly #store: TokenStore;
  readonly #addAuth: AddClientAuthentication | undefined;
  readonly #state = randomBytes(16).toString('base64url');
  #writes: Promise<void> = Promise.resolve();
  #authorizationServer: string | undefined;
  #resource: string | undefined;

  constructor(options: OAuthProviderOptions) {
    this.#options = { ...options };
    this.key = tokenStoreKey(options.serverUrl);
    this.#store = options.store ?? new MemoryTokenStore();
    if (options.tokenEndpointAuthMethod === 'private_key_jwt') {
      if (options.privateKey === undefined || options.clientId === undefined) {
        throw optionError('privateKey', 'private_key_jwt needs clientId and privateKey');
      }
      this.#addAuth = createPrivateKeyJwtAuth({
        issuer: options.clientId,
        subject: options.clientId,
        privateKey: options.privateKey,
        alg: options.signingAlgorithm ?? 'RS256',
      });
    }
    if (
      (options.grant ?? 'authorization_code') === 'authorization_code' &&
      options.redirectUrl === undefined
    ) {
      throw optionError('redirectUrl', 'authorization_code needs a redirectUrl (a loopback receiver)');
    }
    if (
      options.grant === 'cross_app_access' &&
      (options.crossAppAccess === undefined || options.clientId === undefined)
    ) {
      throw optionError(
        'crossAppAccess',
        'cross_app_access needs crossAppAccess (the identity provider) and clientId',
      );
    }
    if (options.grant === 'jwt_bearer' && options.assertion === undefined) {
      throw optionError('assertion', 'jwt_bearer needs an assertion source');
    }
  }

  /** Undefined for the non-interactive grants: the SDK then runs the token request at once. */
  get redirectUrl(): string | undefined {
    return this.#interactive ? this.#options.redirectUrl : undefined;
  }

  get #interactive(): boolean {
    return (this.#options.grant ?? 'authorization_code') === 'authorization_code';
  }

  get clientMetadataUrl(): string | undefined {
    return this.#options.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const m2m = !this.#interactive;
    const grant = this.#options.grant === 'client_credentials' ? 'client_credentials' : JWT_BEARER_GRANT;
    // SEP-990: the JWT bearer grant authenticates with the client secret (basic) unless told otherwise.
    const method =
      this.#options.tokenEndpointAuthMethod ??
      (this.#options.grant === 'cross_app_access' ? 'client_secret_basic' : 'none');
    return {
      client_name: this.#options.clientName ?? 'Interlock',
      redirect_uris: m2m || this.#options.redirectUrl === undefined ? [] : [this.#options.redirectUrl],
      grant_types: m2m ? [grant] : ['authorization_code', 'refresh_token'],
      response_types: m2m ? [] : ['code'],
      token_endpoint_auth_method: method,
      ...(this.#options.scope === undefined ? {} : { scope: this.#options.scope }),
    };
  }

  get addClientAuthentication(): AddClientAuthentication | undefined {
    return this.#addAuth;
  }

  state(): string {
    return this.#state;
  }

  /**
   * The registration for the authorization server `ctx.issuer` names (SEP-2352): one made there before, else the
   * configured client when it belongs there. A configured client bound to another authorization server fails with
   * `AUTH_FAILED` (`authorization_server_changed`) instead of being sent to this one.
   */
  async clientInformation(
    ctx?: OAuthClientInformationContext,
  ): Promise<StoredOAuthClientInformation | undefined> {
    const state = await this.#load();
    const issuer = ctx?.issuer;
    const stored =
      issuer === undefined
        ? state.clientInformation
        : (Object.entries(state.clients ?? {}).find(([k]) => sameIssuer(k, issuer))?.[1] ??
          // Storage from before registrations were kept per issuer: usable where it was stamped, or unstamped.
          (state.clientInformation?.issuer === undefined || sameIssuer(state.clientInformation.issuer, issuer)
            ? state.clientInformation
            : undefined));
    const redirect = this.redirectUrl;
    const registered = (stored as { redirect_uris?: unknown } | undefined)?.redirect_uris;
    // A dynamic registration made for another loopback port is of no use: register again.
    const usable = !(Array.isArray(registered) && redirect !== undefined && !registered.includes(redirect));
    if (stored !== undefined && usable && stored.client_id !== this.#options.clientId) return stored;
    const { clientId, clientSecret, tokenEndpointAuthMethod } = this.#options;
    if (clientId === undefined) return undefined;
    const bound = this.#options.issuer ?? state.configuredClients?.[clientId];
    if (issuer !== undefined && bound !== undefined && !sameIssuer(bound, issuer)) {
      // The secret stays out of the message; the issuers are the servers' own public identifiers.
      throw new AuthError(
        'authorization_server_changed',
        `The client '${clientId}' configured for ${this.key} is registered with the authorization server ${bound}, but the server now names ${issuer}: the client id and secret were not sent there. If the change is genuine, set auth.issuer to ${issuer} and the client registered there.`,
      );
    }
    if (issuer !== undefined && bound === undefined)
      await this.#update({ configuredClients: { ...state.configuredClients, [clientId]: issuer } });
    return {
      client_id: clientId,
      ...(clientSecret === undefined ? {} : { client_secret: clientSecret }),
      ...(tokenEndpointAuthMethod === undefined
        ? this.#options.grant === 'cross_app_access'
          ? { token_endpoint_auth_method: 'client_secret_basic' }
          : {}
        : { token_endpoint_auth_method: tokenEndpointAuthMethod }),
      ...(issuer === undefined ? {} : { issuer }),
    };
  }

  /** Stores a registration under the issuer of the authorization server that made it (SEP-2352). */
  async saveClientInformation(
    info: StoredOAuthClientInformation,
    ctx?: OAuthClientInformationContext,
  ): Promise<void> {
    const issuer = ctx?.issuer ?? info.issuer;
    // The configured client is never written to storage: its secret lives in the config only.
    if (info.client_id === this.#options.clientId) return;
    const clients = { ...(await this.#load()).clients };
    if (issuer !== undefined) clients[issuer] = { ...info, issuer };
    await this.#update({ clientInformation: info, clients });
  }

  async tokens(): Promise<StoredOAuthTokens | undefined> {
    const { tokens, requiredScope } = await this.#load();
    if (tokens === undefined || requiredScope === undefined) return tokens;
    // Step-up: a refresh keeps the old scope, so drop the refresh token and sign in again with more scope.
    const { refresh_token: _dropped, ...rest } = tokens;
    return rest;
  }

  async saveTokens(tokens: StoredOAuthTokens): Promise<void> {
    const { requiredScope } = await this.#load();
    const granted = new Set(tokens.scope?.split(/\s+/) ?? []);
    const covered = requiredScope?.split(/\s+/).every((s) => granted.has(s)) ?? true;
    // A server that does not echo `scope` granted what was asked (RFC 6749 5.1).
    const lifetime = tokens.expires_in;
    await this.#update({
      tokens,
      expiresAt:
        typeof lifetime === 'number' ? (this.#options.clock ?? Date.now)() + lifetime * 1000 : undefined,
      requiredScope: covered || tokens.scope === undefined ? undefined : requiredScope,
    });
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    const open = this.#options.onAuthorizationUrl;
    if (open === undefined) {
      throw new AuthError(
        'sign_in_required',
        `Sign-in to ${this.#options.serverUrl} is needed but no browser opener is configured: sign in with 'interlock login', or pass onAuthorizationUrl.`,
      );
    }
    await open(url);
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    await this.#update({ codeVerifier });
  }

  async codeVerifier(): Promise<string> {
    const verifier = (await this.#load()).codeVerifier;
    if (verifier === undefined) {
      throw new AuthError('sign_in_failed', 'No PKCE code verifier saved: start the sign-in again.');
    }
    return verifier;
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    await this.#update({ discoveryState: state });
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    return (await this.#load()).discoveryState;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    const patch: StoredOAuthState = {};
    if (scope === 'all' || scope === 'tokens') {
      patch.tokens = undefined;
      patch.expiresAt = undefined;
    }
    if (scope === 'all' || scope === 'client') patch.clientInformation = undefined;
    if (scope === 'all' || scope === 'verifier') patch.codeVerifier = undefined;
    if (scope === 'all' || scope === 'discovery') patch.discoveryState = undefined;
    await this.#update(patch);
  }

  /** The DPoP session when DPoP is on: the SDK signs token requests and resource requests with it. */
  async dpop(): Promise<DpopSession | undefined> {
    return this.#options.dpop?.();
  }

  /** Called by the SDK's `auth()` with the issuer it resolved: the audience of a cross-app access grant. */
  saveAuthorizationServerUrl(issuer: string): void {
    this.#authorizationServer = issuer;
  }

  /** Called by the SDK's `auth()` with the resource (RFC 9728) the tokens are for. */
  saveResourceUrl(resource: string): void {
    this.#resource = resource;
  }

  /**
   * The non-interactive grants. Client credentials: the grant, with the configured scope plus any step-up scope.
   * Cross-app access: an ID-JAG for this server's authorization server and resource from the identity provider
   * (RFC 8693 token exchange), redeemed with the JWT bearer grant (RFC 7523).
   */
  async prepareTokenRequest(scope?: string): Promise<URLSearchParams | undefined> {
    const grant = this.#options.grant;
    if (grant === undefined || grant === 'authorization_code') return undefined;
    const wanted = mergeScopes(scope, (await this.#load()).requiredScope);
    if (grant === 'jwt_bearer') {
      // RFC 7523 2.1 (workload identity federation, SEP-1933): the workload's JWT is the grant.
      const assertion = (await this.#options.assertion?.()) ?? '';
      const params = new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion });
      if (wanted !== undefined) params.set('scope', wanted);
      return params;
    }
    if (grant === 'cross_app_access') {
      const assertion = await this.#idJag(wanted);
      return new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion });
    }
    const params = new URLSearchParams({ grant_type: 'client_credentials' });
    if (wanted !== undefined) params.set('scope', wanted);
    return params;
  }

  async #idJag(scope: string | undefined): Promise<string> {
    const idp = this.#options.crossAppAccess;
    const audience = this.#authorizationServer;
    const resource = this.#resource ?? this.#options.serverUrl;
    if (idp === undefined || audience === undefined) {
      throw new AuthError(
        'cross_app_access_refused',
        `Cross-app access for ${this.key} needs the server's authorization server, which discovery did not find.`,
      );
    }
    const common = {
      audience,
      resource,
      idToken: await idp.idToken(),
      clientId: idp.clientId,
      ...(idp.clientSecret === undefined ? {} : { clientSecret: idp.clientSecret }),
      ...(scope === undefined ? {} : { scope }),
      fetchFn: this.#options.fetch ?? fetch,
    };
    try {
      const result =
        idp.tokenEndpoint !== undefined
          ? await requestJwtAuthorizationGrant({ ...common, tokenEndpoint: idp.tokenEndpoint })
          : await discoverAndRequestJwtAuthGrant({ ...common, idpUrl: idp.issuer ?? '' });
      return result.jwtAuthGrant;
    } catch {
      // No cause: the identity provider's answer may quote the ID token, which is a secret.
      throw new AuthError(
        'cross_app_access_refused',
        `The identity provider did not exchange the ID token for an ID-JAG for ${this.key}: check auth.idp (its token endpoint or issuer, and clientId) and that the ID token is current.`,
      );
    }
  }

  /**
   * Records scopes a server demanded with `insufficient_scope`; the next token request asks for them (issue 9,
   * step-up). Called by the fetch wrapper of {@link createServerAuth}.
   */
  async requireScope(scope: string): Promise<string> {
    const state = await this.#load();
    const granted = state.tokens?.scope;
    const required = mergeScopes(granted, this.#options.scope, state.requiredScope, scope) ?? scope;
    await this.#update({ requiredScope: required });
    return required;
  }

  /** Forgets everything stored for this server (sign out). */
  async clear(): Promise<void> {
    await this.#store.delete(this.key);
  }

  async #load(): Promise<StoredOAuthState> {
    return (await this.#store.load(this.key)) ?? {};
  }

  #update(patch: StoredOAuthState): Promise<void> {
    // Read-modify-write, one at a time per provider, so concurrent saves never drop each other's fields.
    const run = this.#writes.then(async () => {
      const next: StoredOAuthState = { ...(await this.#load()), ...patch };
      for (const k of Object.keys(next) as (keyof StoredOAuthState)[])
        if (next[k] === undefined) delete next[k];
      await this.#store.save(this.key, next);
    });
    this.#writes = run.catch(() => {});
    return run;
  }
}
