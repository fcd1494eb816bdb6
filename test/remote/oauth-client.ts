// The client side of the OAuth tests: a guarded fetch that allows loopback, an opener that plays the browser, and
// a connect helper over interop's `openClient` that closes what it opened.

import { parseServerConfig } from '../../src/config/servers.js';
import { type OpenClient, openClient, type ServerAuthFactory } from '../../src/interop/open-client.js';
import { createHttpClient, type HttpClient } from '../../src/net/http.js';

/** Plays the browser: follows the authorization URL, whose redirect lands on the loopback receiver. */
export async function autoApprove(url: URL): Promise<void> {
  const res = await fetch(url, { redirect: 'manual' });
  const location = res.headers.get('location');
  if (location === null) throw new Error(`authorize answered ${res.status}`);
  await fetch(location);
}

/** Opens clients over one guarded fetch that allows 127.0.0.1; `close()` closes them all and the fetch. */
export class OAuthClients implements AsyncDisposable {
  readonly #http: HttpClient = createHttpClient({
    // Loopback is allowed explicitly: the default-deny policy is what the SSRF tests check.
    network: { allowHosts: ['127.0.0.1'] },
    http: { proxy: 'none' },
  });
  readonly #opened: OpenClient[] = [];

  async connect(
    url: string,
    auth: Record<string, unknown>,
    serverAuth: ServerAuthFactory,
    transport: 'http' | 'sse' | 'auto' = 'http',
  ): Promise<OpenClient> {
    const config = parseServerConfig({ name: 'remote', transport, url, auth });
    const open = await openClient(config, {
      identity: { name: 'test', version: '1' },
      fetch: this.#http.fetch,
      serverAuth,
      signal: new AbortController().signal,
      timeoutMs: 15_000,
      onStderr: () => {},
    });
    this.#opened.push(open);
    return open;
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.#opened.splice(0).map((o) => o.client.close()));
    await this.#http.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** The text of the first content block of a tool call. */
export async function callText(open: OpenClient, name: string): Promise<string> {
  const result = await open.client.callTool({ name, arguments: {} });
  return (result.content as { text: string }[])[0]?.text ?? '';
}
