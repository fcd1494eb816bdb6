/**
 * Interactive sign-in for the CLI (issue 9): a redirect receiver on a loopback port (RFC 8252 7.3) and a browser
 * opener. The receiver listens on 127.0.0.1 only, accepts one redirect carrying the expected `state`, and closes.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AuthError } from '../errors.js';

/** Options of {@link LoopbackReceiver.start}. */
export interface LoopbackReceiverOptions {
  /** Port to listen on; fix it when the authorization server matches redirect URIs exactly. @default 0 (any) */
  port?: number | undefined;
  /** Path of the redirect URI. @default '/callback' */
  path?: string | undefined;
}

/**
 * What an authorization redirect carried: the code, and the `iss` parameter (RFC 9207) that the SDK checks against
 * the authorization server's issuer before the code is redeemed.
 */
export interface AuthorizationResponse {
  code: string;
  /** The `iss` query parameter, when the authorization server sent one. */
  iss?: string | undefined;
}

type Redirect = AuthorizationResponse & { state: string | undefined };

/** Receives one OAuth redirect on `http://127.0.0.1:<port>/callback`. `close()` is safe to call twice. */
export class LoopbackReceiver implements AsyncDisposable {
  readonly redirectUrl: string;
  readonly #server: Server;
  readonly #code: Promise<Redirect>;
  #closed = false;

  private constructor(server: Server, redirectUrl: string, code: Promise<Redirect>) {
    this.#server = server;
    this.redirectUrl = redirectUrl;
    this.#code = code;
    code.catch(() => {});
  }

  /** Starts listening on 127.0.0.1. */
  static async start(options: LoopbackReceiverOptions = {}): Promise<LoopbackReceiver> {
    const path = options.path ?? '/callback';
    let settle!: { resolve: (v: Redirect) => void; reject: (e: Error) => void };
    const code = new Promise<Redirect>((resolve, reject) => {
      settle = { resolve, reject };
    });
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (req.method !== 'GET' || url.pathname !== path) {
        res.writeHead(404).end();
        return;
      }
      const error = url.searchParams.get('error');
      const value = url.searchParams.get('code');
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      if (error !== null || value === null) {
        res.end('<p>Sign-in failed. You can close this window.</p>');
        // Only the error code is kept: descriptions are server text, and codes never hold secrets.
        settle.reject(
          new AuthError(
            'sign_in_failed',
            `Sign-in failed: ${error ?? 'no authorization code in the redirect'}. Start the sign-in again; if the authorization server refused it (e.g. access_denied), check the account and the scopes asked for.`,
          ),
        );
        return;
      }
      res.end('<p>Signed in. You can close this window.</p>');
      settle.resolve({
        code: value,
        state: url.searchParams.get('state') ?? undefined,
        iss: url.searchParams.get('iss') ?? undefined,
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    return new LoopbackReceiver(server, `http://127.0.0.1:${port}${path}`, code);
  }

  /** Waits for the redirect and gives its code; checks `state` when given. Rejects when `signal` aborts. */
  async waitForCode(
    options: { state?: string | undefined; signal?: AbortSignal | undefined } = {},
  ): Promise<string> {
    return (await this.waitForResponse(options)).code;
  }

  /**
   * Waits for the redirect and gives its code and `iss`; checks `state` when given. Rejects when `signal` aborts.
   * Pass `iss` on to the SDK (`auth(..., { authorizationCode, iss })`): it refuses a code from the wrong issuer.
   */
  async waitForResponse(
    options: { state?: string | undefined; signal?: AbortSignal | undefined } = {},
  ): Promise<AuthorizationResponse> {
    const { signal } = options;
    signal?.throwIfAborted();
    const aborted = new Promise<never>((_, reject) => {
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
    const got = await Promise.race([this.#code, aborted]);
    if (options.state !== undefined && got.state !== options.state) {
      throw new AuthError(
        'state_mismatch',
        'Sign-in failed: the redirect carried the wrong state (possible CSRF); the code was not used. Start the sign-in again.',
      );
    }
    return { code: got.code, iss: got.iss };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** Options of {@link openBrowser}. */
export interface OpenBrowserOptions {
  /** Where `BROWSER` is read. @default process.env */
  env?: Readonly<Record<string, string | undefined>> | undefined;
}

/**
 * Opens `url` in a browser: with the command in the `BROWSER` environment variable when it is set and not empty (the
 * whole value is the command; it runs with the URL as its one argument and no shell), else with the platform's
 * opener (`open`, `xdg-open`, or `rundll32` on Windows). The URL is written first, so a missing browser loses
 * nothing; a command that cannot start is reported through `write` too. Resolves once the command started (it is
 * not waited for) or failed to start; never rejects.
 */
export function openBrowser(
  url: URL,
  write: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
  options: OpenBrowserOptions = {},
): Promise<void> {
  write(`Open this URL to sign in: ${url.href}`);
  const browser = (options.env ?? process.env).BROWSER;
  const [cmd, args]: [string, string[]] =
    browser !== undefined && browser !== ''
      ? [browser, [url.href]]
      : process.platform === 'darwin'
        ? ['open', [url.href]]
        : process.platform === 'win32'
          ? ['rundll32', ['url.dll,FileProtocolHandler', url.href]]
          : ['xdg-open', [url.href]];
  const failed = (err: unknown) => {
    const code = (err as NodeJS.ErrnoException | undefined)?.code ?? 'error';
    const what = cmd === browser ? `the BROWSER command '${cmd}'` : `'${cmd}'`;
    write(`Could not run ${what} (${code}); open the URL above yourself.`);
  };
  return new Promise<void>((resolve) => {
    try {
      // Detached: a browser that stays open does not keep this process alive, nor get its Ctrl-C.
      const child = spawn(cmd, args, { stdio: 'ignore', detached: true });
      child.once('spawn', () => {
        child.unref();
        resolve();
      });
      child.once('error', (err) => {
        failed(err);
        resolve();
      });
    } catch (err) {
      failed(err);
      resolve();
    }
  });
}
