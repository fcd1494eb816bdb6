/**
 * One upstream session per caller for a 2025-era server (issue 41): such a server binds an `Mcp-Session-Id` to
 * whoever opened it, so a caller's request must not ride the gateway's session. A caller's first request opens a
 * session of its own with its exchanged token (`initialize`, then `notifications/initialized`), and the request is
 * sent on it. Sessions are bounded (`maxConnections`; beyond it the least recently used idle one is closed, and
 * when every one is busy the request is refused with OVERLOADED) and closed (HTTP DELETE) after `idleTimeoutMs`.
 * A 2026-07-28 server has no sessions: its requests carry no `Mcp-Session-Id` and never come here.
 */
import type { FetchLike } from '@modelcontextprotocol/client';
import { OverloadedError, UpstreamIdentityError } from '../errors.js';

interface Session {
  readonly id: Promise<string>;
  token: string;
  busy: number;
  timer: NodeJS.Timeout | undefined;
}

/** Options of {@link CallerSessions}. */
export interface CallerSessionsOptions {
  url: string;
  server: string;
  maxConnections: number;
  idleTimeoutMs: number;
  fetch: () => FetchLike;
  /**
   * The `initialize` params of the connection's own session (its capabilities and client info): a caller's session
   * declares the same, so the server may ask the caller what it may ask the gateway (elicitation, sampling).
   */
  declared?: (() => Record<string, unknown> | undefined) | undefined;
}

export class CallerSessions {
  readonly #sessions = new Map<string, Session>();
  readonly #options: CallerSessionsOptions;

  constructor(options: CallerSessionsOptions) {
    this.#options = options;
  }

  /** Sessions open now. */
  get size(): number {
    return this.#sessions.size;
  }

  /**
   * Sends `request` (given the session id to use) on the caller's own session, opened with `token` when it has
   * none. The session counts as busy until the answer's body has been read (or the request failed); `done` is
   * called then.
   */
  async send(
    key: string,
    token: string,
    protocolVersion: string | null,
    request: (sessionId: string) => Promise<Response>,
    done?: () => void,
  ): Promise<Response> {
    let session = this.#sessions.get(key);
    if (session === undefined) {
      this.#makeRoom();
      session = { id: this.#open(token, protocolVersion), token, busy: 0, timer: undefined };
      this.#sessions.set(key, session);
      const opened = session;
      opened.id.catch(() => {
        if (this.#sessions.get(key) === opened) this.#sessions.delete(key);
      });
    } else {
      // Most recently used last.
      this.#sessions.delete(key);
      this.#sessions.set(key, session);
    }
    session.token = token;
    session.busy++;
    clearTimeout(session.timer);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.#release(key, session);
      done?.();
    };
    try {
      const response = await request(await session.id);
      // The server forgot the session: the next request opens another.
      if (response.status === 404) this.#sessions.delete(key);
      return whenRead(response, release);
    } catch (err) {
      release();
      throw err;
    }
  }

  /**
   * Sends a message that belongs on the caller's open session (the answer to a question the server asked there, a
   * cancellation), with the caller's current token; `undefined` when the caller has no session open.
   */
  async answer(
    key: string,
    send: (sessionId: string, token: string) => Promise<Response>,
  ): Promise<Response | undefined> {
    const session = this.#sessions.get(key);
    if (session === undefined) return undefined;
    return send(await session.id, session.token);
  }

  /** Closes every session (best effort). */
  async close(): Promise<void> {
    const all = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.allSettled(all.map((s) => this.#delete(s)));
  }

  #release(key: string, session: Session): void {
    session.busy--;
    if (session.busy > 0 || this.#sessions.get(key) !== session) return;
    session.timer = setTimeout(() => {
      if (this.#sessions.get(key) !== session || session.busy > 0) return;
      this.#sessions.delete(key);
      void this.#delete(session);
    }, this.#options.idleTimeoutMs);
    session.timer.unref();
  }

  /** Closes the least recently used idle session when the pool is full; none idle: OVERLOADED. */
  #makeRoom(): void {
    if (this.#sessions.size < this.#options.maxConnections) return;
    for (const [key, session] of this.#sessions) {
      if (session.busy > 0) continue;
      clearTimeout(session.timer);
      this.#sessions.delete(key);
      void this.#delete(session);
      return;
    }
    throw new OverloadedError(
      `Server '${this.#options.server}' has as many callers' sessions open as allowed, all of them busy; try again shortly.`,
      { server: this.#options.server },
    );
  }

  async #open(token: string, protocolVersion: string | null): Promise<string> {
    const fetch = this.#options.fetch();
    const headers = (sessionId?: string): Record<string, string> => ({
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(protocolVersion === null ? {} : { 'mcp-protocol-version': protocolVersion }),
      ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId }),
    });
    const declared = this.#options.declared?.();
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: protocolVersion ?? '2025-11-25',
        capabilities: declared?.capabilities ?? {},
        clientInfo: declared?.clientInfo ?? { name: 'mcp-interlock-gateway', version: '0' },
      },
    };
    const response = await fetch(this.#options.url, {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify(initialize),
    });
    await response.body?.cancel().catch(() => {});
    const id = response.headers.get('mcp-session-id');
    if (!response.ok || id === null) {
      throw new UpstreamIdentityError(
        'exchange_failed',
        `Server '${this.#options.server}' did not open a session for the caller; the call was not sent.`,
        {
          server: this.#options.server,
          operatorHint: `Opening a session of its own for a caller on server '${this.#options.server}' got HTTP ${response.status}${id === null ? ' without an Mcp-Session-Id' : ''}: check that the server accepts the exchanged tokens.`,
        },
      );
    }
    const initialized = await fetch(this.#options.url, {
      method: 'POST',
      headers: headers(id),
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    await initialized.body?.cancel().catch(() => {});
    return id;
  }

  async #delete(session: Session): Promise<void> {
    try {
      const id = await session.id;
      const response = await this.#options.fetch()(this.#options.url, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${session.token}`, 'mcp-session-id': id },
      });
      await response.body?.cancel().catch(() => {});
    } catch {
      // Best effort: the server ends idle sessions itself too.
    }
  }
}

/** `response`, calling `done` once its body has been read, cancelled or failed (at once when it has none). */
function whenRead(response: Response, done: () => void): Response {
  const body = response.body;
  if (body === null) {
    done();
    return response;
  }
  const reader = body.getReader();
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: finished, value } = await reader.read();
        if (finished) {
          done();
          controller.close();
        } else controller.enqueue(value);
      } catch (err) {
        done();
        controller.error(err);
      }
    },
    cancel(reason) {
      done();
      return reader.cancel(reason);
    },
  });
  return new Response(stream, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
