/**
 * What every HTTP request to the gateway passes before anything reads it (issue 38): the `Host` header on every
 * path (DNS rebinding), the `Origin` header (MCP transport spec: servers MUST validate it, so a web page in the
 * user's browser cannot drive a loopback gateway), exactly one unambiguous credential, and an operator's
 * credential for `/metrics`. Refusals say what happened; none says how to get past it.
 */
import { TLSSocket } from 'node:tls';
import { type AuthInfo, hostHeaderValidationResponse } from '@modelcontextprotocol/server';
import type { AuthMethod, PrincipalMatch } from '../config/gateway.js';
import { type AuthThrottle, CallerAddresses } from './auth-throttle.js';
import { principalFromCertificate, principalMatches, principalOf } from './principals.js';

/** Host names a loopback listener answers to, and the browser origins it trusts on any port. */
export const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);
const LOOPBACK_HOSTNAMES = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** `Bearer`, one space, one token (no space, no comma): anything else is not one credential. */
const BEARER = /^Bearer ([^\s,]+)$/i;

/** What the checks read of Node's request: every header as sent, and the socket (for a client certificate). */
export interface IncomingRequest {
  readonly rawHeaders: readonly string[];
  readonly socket: unknown;
}

/** Options of {@link FrontDoor}. */
export interface FrontDoorOptions {
  /** Host names (no port) a request's `Host` may name. */
  allowedHosts: readonly string[];
  /** The MCP endpoint's public URL: its origin is always allowed. */
  resourceUrl: URL;
  /** Whether the listener is on a loopback address: loopback origins (any port) are allowed then. */
  loopback: boolean;
  /** `http.allowedOrigins`: exact origins besides those. */
  allowedOrigins?: readonly string[] | undefined;
  /** The bearer check (API keys, JWTs); `undefined` when the gateway has no `auth`. */
  bearer?: ((request: Request) => Promise<AuthInfo | Response>) | undefined;
  /** `http.tls.clientCertificates`. */
  certificates: 'none' | 'optional' | 'required';
  /** `gateway.operators`, and the method its names without one stand for. */
  operators?: PrincipalMatch | undefined;
  shorthand?: AuthMethod | undefined;
  /** `gateway.auth.failedAttempts`: refused credentials per address, and the blocks they lead to. */
  throttle?: AuthThrottle | undefined;
  /** `gateway.http.trustedProxies`: whose `X-Forwarded-For` names the caller's address. */
  trustedProxies?: readonly string[] | undefined;
}

/** The checks in front of every route; the gateway routes only what {@link screen} lets through. */
export class FrontDoor {
  readonly #options: FrontDoorOptions;
  readonly #origins: ReadonlySet<string>;
  readonly #addresses: CallerAddresses;

  constructor(options: FrontDoorOptions) {
    this.#options = options;
    this.#addresses = new CallerAddresses(options.trustedProxies);
    this.#origins = new Set([options.resourceUrl.origin, ...(options.allowedOrigins ?? [])]);
  }

  /** Whether the gateway asks for a credential at all (else it is a loopback listener for local callers). */
  get authenticates(): boolean {
    return this.#options.bearer !== undefined || this.#options.certificates !== 'none';
  }

  /** Where a request comes from: the peer, or behind trusted proxies the caller `X-Forwarded-For` names. */
  addressOf(incoming: IncomingRequest): string {
    return this.#addresses.of(incoming);
  }

  /** Whether a verified client certificate can name the caller (`http.tls.clientCertificates`). */
  get certificatesAccepted(): boolean {
    return this.#options.certificates !== 'none';
  }

  /** Host, then Origin: a refusal for a request no route may see, or `undefined`. */
  screen(request: Request): Response | undefined {
    const rebinding = hostHeaderValidationResponse(request, [...this.#options.allowedHosts]);
    if (rebinding !== undefined) return rebinding;
    const origin = request.headers.get('origin');
    if (origin !== null && !this.#originAllowed(origin)) {
      return jsonRpcRefusal(403, 'Forbidden: this gateway does not take requests from that Origin.');
    }
    return undefined;
  }

  /**
   * The caller's credential: a verified client certificate, else one bearer token. `undefined` when the gateway
   * authenticates nobody; a `Response` (400, 401, 403) when the credential is missing, bad or ambiguous, and 429,
   * unread, when its address had too many credentials refused (`gateway.auth.failedAttempts`).
   */
  async authenticate(request: Request, incoming: IncomingRequest): Promise<AuthInfo | Response | undefined> {
    const headers = authorizationHeaders(incoming);
    const certificate = this.#options.certificates === 'none' ? undefined : certificateAuth(incoming);
    if (certificate !== undefined) {
      // Two identities on one request: a certificate and a token may name different callers.
      if (headers.length > 0) {
        return invalidRequest(
          'The request has both a client certificate and an Authorization header; send one credential.',
        );
      }
      return certificate;
    }
    const bearer = this.#options.bearer;
    if (bearer === undefined) return undefined;
    if (headers.length > 1) {
      return invalidRequest(
        `The request has ${headers.length} Authorization headers; send exactly one: Authorization: Bearer <token>.`,
      );
    }
    const [header] = headers;
    if (header !== undefined && !BEARER.test(header)) {
      return invalidRequest(
        'The Authorization header is not one bearer credential; send Authorization: Bearer <token>.',
      );
    }
    const throttle = this.#options.throttle;
    // Only a credential is a guess: a request without one is refused (401) but neither counted nor blocked.
    if (throttle === undefined || header === undefined) return bearer(request);
    const address = this.#addresses.of(incoming);
    const blockedMs = throttle.blockedFor(address);
    if (blockedMs > 0) {
      const seconds = Math.ceil(blockedMs / 1000);
      return jsonRpcRefusal(
        429,
        `Too many refused credentials from this address: none is checked for ${seconds} s.`,
        { 'retry-after': String(seconds) },
      );
    }
    const verdict = await bearer(request);
    if (verdict instanceof Response && verdict.status === 401) await throttle.failed(address);
    return verdict;
  }

  /** Whether the caller may read `/metrics`: an operator's credential, or any local caller without auth. */
  async metricsAccess(request: Request, incoming: IncomingRequest): Promise<Response | undefined> {
    if (!this.authenticates) return undefined;
    const verdict = await this.authenticate(request, incoming);
    if (verdict instanceof Response) return verdict;
    const principal = principalOf(verdict);
    const operators = this.#options.operators;
    if (
      principal === undefined ||
      operators === undefined ||
      !principalMatches(operators, principal, this.#options.shorthand)
    ) {
      return jsonRpcRefusal(403, 'Forbidden: this credential may not read the metrics.');
    }
    return undefined;
  }

  #originAllowed(origin: string): boolean {
    if (this.#origins.has(origin)) return true;
    if (!this.#options.loopback) return false;
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return false;
    }
    // `Origin: null` (sandboxed frames, files) does not parse as a URL with an origin: refused above.
    return (
      (url.protocol === 'http:' || url.protocol === 'https:') &&
      url.origin === origin &&
      LOOPBACK_HOSTNAMES.has(url.hostname)
    );
  }
}

/** Every `Authorization` header as sent (Node keeps only the first in `headers`; `rawHeaders` has all). */
function authorizationHeaders(incoming: IncomingRequest): string[] {
  const out: string[] = [];
  const raw = incoming.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]?.toLowerCase() === 'authorization') out.push(raw[i + 1] ?? '');
  }
  return out;
}

/** The caller a verified client certificate names, as the bearer check would describe it; else undefined. */
function certificateAuth(incoming: IncomingRequest): AuthInfo | undefined {
  const socket = incoming.socket;
  if (!(socket instanceof TLSSocket) || !socket.authorized) return undefined;
  const principal = principalFromCertificate(socket.getPeerCertificate().subject as never);
  if (principal === undefined) return undefined;
  return { token: '', clientId: principal.subject, scopes: [], extra: { principal } };
}

/** RFC 6750 §3.1 `invalid_request`: 400, with the challenge that names it. */
function invalidRequest(description: string): Response {
  return Response.json(
    { error: 'invalid_request', error_description: description },
    {
      status: 400,
      headers: { 'WWW-Authenticate': `Bearer error="invalid_request", error_description="${description}"` },
    },
  );
}

/** The SDK's shape for a refusal before any MCP message: a JSON-RPC error without an id. */
function jsonRpcRefusal(status: number, message: string, headers?: Record<string, string>): Response {
  return Response.json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }, { status, headers });
}
