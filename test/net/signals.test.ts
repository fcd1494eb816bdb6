/**
 * Issue 15, the lean hot path over HTTP: the SDK's transports pass one long-lived signal to every request.
 * Interlock's fetch gives each request its own signal (released when its answer's body closes, or when
 * collected for a body that takes undici's fetch), so that signal keeps one abort listener however many requests
 * pass it, and aborting it still aborts every request in flight, a response body being read included.
 * Against a real HTTP server on loopback.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createHttpClient } from '../../src/net/http.js';
import { weakFollowersOf } from '../../src/net/signals.js';
import { closesAfterEach } from '../remote/cleanup.js';
import { startHttp } from '../remote/net-fixtures.js';

const track = closesAfterEach();

function client() {
  return track(createHttpClient({ network: { allowHosts: ['127.0.0.1'] }, http: { proxy: 'none' } }));
}

/**
 * Sends a thousand requests, a hundred at a time, all with one transport's signal; each answer must echo `ok`.
 * Returns that signal and how many abort listeners it gained.
 */
async function thousandRequests(url: string, init: RequestInit = {}) {
  const http = client();
  const transport = new AbortController();
  const before = getEventListeners(transport.signal, 'abort').length;
  for (let batch = 0; batch < 10; batch++) {
    const answers = await Promise.all(
      Array.from({ length: 100 }, () =>
        http.fetch(url, { ...init, signal: transport.signal }).then((r) => r.text()),
      ),
    );
    expect(answers.every((a) => a === 'ok')).toBe(true);
  }
  return { signal: transport.signal, added: getEventListeners(transport.signal, 'abort').length - before };
}

describe("one signal shared by a transport's requests", () => {
  it('keeps one abort listener on it over a thousand requests', async () => {
    const server = track(await startHttp((_req, res) => res.end('ok')));
    const { added } = await thousandRequests(server.url);
    expect(added).toBe(1);
  });

  it('keeps one abort listener over a thousand requests whose bodies take the fetch path (blobs)', async () => {
    const server = track(await startHttp((req, res) => req.pipe(res)));
    const { signal, added } = await thousandRequests(server.url, { method: 'POST', body: new Blob(['ok']) });
    expect(added).toBe(1);
    // Held weakly and swept as the set grows: never more than twice what is still in use since the last sweep.
    expect(weakFollowersOf(signal)).toBeLessThanOrEqual(1000);
  });

  it('aborts a request waiting for its answer, with the reason given', async () => {
    let arrived!: () => void;
    const received = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const server = track(await startHttp(() => arrived()));
    const http = client();
    const transport = new AbortController();
    const waiting = http.fetch(server.url, { signal: transport.signal }).catch((e: unknown) => e);
    await received;
    transport.abort(new Error('transport closed'));
    expect(await waiting).toMatchObject({ message: 'transport closed' });
  });

  it('aborts a response body being read (a stream of events)', async () => {
    const server = track(
      await startHttp((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: first\n\n');
      }),
    );
    const http = client();
    const transport = new AbortController();
    const response = await http.fetch(server.url, { signal: transport.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('first');
    const next = reader.read().catch((e: unknown) => e);
    transport.abort(new Error('transport closed'));
    expect(await next).toMatchObject({ message: 'transport closed' });
  });

  it('refuses at once with a signal that is already aborted', async () => {
    const server = track(await startHttp((_req, res) => res.end('ok')));
    const http = client();
    const err = await http
      .fetch(server.url, { signal: AbortSignal.abort(new Error('gone')) })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ message: 'gone' });
  });
});
