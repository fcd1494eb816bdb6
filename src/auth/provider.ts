/**
 * The built-in OAuth client for MCP servers (issue 9, MCP 2025-11-25 "Authorization"), as an SDK
 * `OAuthClientProvider`: the SDK's `auth()` runs protected resource metadata discovery (RFC 9728), authorization
 * server metadata (RFC 8414 / OpenID discovery with its fallbacks), dynamic client registration (RFC 7591) or client
 * ID metadata documents, PKCE S256, the `resource` parameter (RFC 8707), scope selection and refresh. This provider
 * adds pluggable storage, the client credentials grant (client secret basic/post or private key JWT) and step-up
 * on `insufficient_scope` for both grants.
 */
import { randomBytes } from 'node:crypto';
import type {
  AddClientAuthentication,
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  OAuthTokens,
} from '@modelcontextprotocol/client';
import { createPrivateKeyJwtAuth } from '@modelcontextprotocol/client';
import { MemoryTokenStore, type StoredOAuthState, type TokenStore } from './token-store.js';

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
  /** `authorization_code` (a user signs in) or `client_credentials` (machine to machine). @default 'authorization_code' */
  grant?: 'authorization_code' | 'client_credentials' | undefined;
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

function mergeScopes(...scopes: (string | undefined)[]): string | undefined {
  const all = new Set<string>();
  for (const s of scopes) for (const part of s?.split(/\s+/) ?? []) if (part !== '') all.add(part);
  return all.size === 0 ? undefined : [...all].join(' ');
}

/** An SDK `OAuthClientProvider` backed by a {@link TokenStore}. */
export class OAuthProvider implements OAuthClientProvider {
  readonly key: string;
  readonly #options: OAuthProviderOptions;
  readonly #store: TokenStore;
  readonly #addAuth: AddClientAuthentication | undefined;
  readonly #state = randomBytes(16).toString('base64url');
  #writes: Promise<void> = Promise.resolve();

  constructor(options: OAuthProviderOptions) {
    this.#options = { ...options };
    this.key = tokenStoreKey(options.serverUrl);
    this.#store = options.store ?? new MemoryTokenStore();
    if (options.tokenEndpointAuthMethod === 'private_key_jwt') {
      if (options.privateKey === undefined || options.clientId === undefined) {
        throw new TypeError('private_key_jwt needs clientId and privateKey');
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
      throw new TypeError('authorization_code needs a redirectUrl (a loopback receiver)');
    }
  }

  /** Undefined for client credentials: the SDK then runs the non-interactive token request. */
  get redirectUrl(): string | undefined {
    return this.#options.grant === 'client_credentials' ? undefined : this.#options.redirectUrl;
  }

  get clientMetadataUrl(): string | undefined {
    return this.#options.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const m2m = this.#options.grant === 'client_credentials';
    return {
      client_name: this.#options.clientName ?? 'Interlock',
      redirect_uris: m2m || this.#options.redirectUrl === undefined ? [] : [this.#options.redirectUrl],
      grant_types: m2m ? ['client_credentials'] : ['authorization_code', 'refresh_token'],
      response_types: m2m ? [] : ['code'],
      token_endpoint_auth_method: this.#options.tokenEndpointAuthMethod ?? 'none',
      ...(this.#options.scope === undefined ? {} : { scope: this.#options.scope }),
    };
  }

  get addClientAuthentication(): AddClientAuthentication | undefined {
    return this.#addAuth;
  }

  state(): string {
    return this.#state;
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const stored = (await this.#load()).clientInformation;
    const redirect = this.redirectUrl;
    const registered = (stored as { redirect_uris?: unknown } | undefined)?.redirect_uris;
    // A dynamic registration made for another loopback port is of no use: register again.
    if (Array.isArray(registered) && redirect !== undefined && !registered.includes(redirect))
      return undefined;
    if (stored !== undefined) return stored;
    const { clientId, clientSecret, tokenEndpointAuthMethod } = this.#options;
    if (clientId === undefined) return undefined;
    return {
      client_id: clientId,
      ...(clientSecret === undefined ? {} : { client_secret: clientSecret }),
      ...(tokenEndpointAuthMethod === undefined
        ? {}
        : { token_endpoint_auth_method: tokenEndpointAuthMethod }),
    };
  }

  async saveClientInformation(info: OAuthClientInformationMixed): Promise<void> {
    await this.#update({ clientInformation: info });
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    const { tokens, requiredScope } = await this.#load();
    if (tokens === undefined || requiredScope === undefined) return tokens;
    // Step-up: a refresh keeps the old scope, so drop the refresh token and sign in again with more scope.
    const { refresh_token: _dropped, ...rest } = tokens;
    return rest;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
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
    if (open === undefined) throw new Error('Sign-in is needed but no browser opener is configured.');
    await open(url);
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    await this.#update({ codeVerifier });
  }

  async codeVerifier(): Promise<string> {
    const verifier = (await this.#load()).codeVerifier;
    if (verifier === undefined) throw new Error('No PKCE code verifier saved: start the sign-in again.');
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

  /** Client credentials: the grant, with the configured scope plus any step-up scope. */
  async prepareTokenRequest(scope?: string): Promise<URLSearchParams | undefined> {
    if (this.#options.grant !== 'client_credentials') return undefined;
    const params = new URLSearchParams({ grant_type: 'client_credentials' });
    const wanted = mergeScopes(scope, (await this.#load()).requiredScope);
    if (wanted !== undefined) params.set('scope', wanted);
    return params;
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
