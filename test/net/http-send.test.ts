/**
 * Issue 15, the lean hot path over HTTP: a request with a text, form or byte body (every request of the MCP
 * transports and the OAuth endpoints) is sent with undici's `request()` instead of its fetch, and its answer is one
 * of Node's global `Response`s. These tests hold it to what callers of fetch rely on, against a real HTTP server on
 * loopback.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createHttpClient } from '../../src/net/http.js';
import { CONDITION_TIMEOUT_MS } from '../helpers/wait.js';
import { closesAfterEach } from '../remote/cleanup.js';
import { startHttp } from '../remote/net-fixtures.js';

const track = closesAfterEach();

function client(connections?: number) {
  return track(
    createHttpClient({ network: { allowHosts: ['127.0.0.1'] }, http: { proxy: 'none', connections } }),
  );
}

interface Seen {
  method: string | undefined;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A server that records each request and answers with `answer`. */
async function recording(answer: (seen: Seen, res: import('node:http').ServerResponse) => void) {
  const seen: Seen[] = [];
  const server = track(
    await startHttp((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => {
        body += chunk;
      });
      req.on('end', () => {
        const one = { method: req.method, headers: req.headers, body };
        seen.push(one);
        answer(one, res);
      });
    }),
  );
  return { server, seen };
}

describe('requests sent without the fetch algorithm', () => {
  it('sends a text body with the headers fetch would add, and answers with a global Response', async () => {
    const { server, seen } = await recording((_seen, res) => {
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.writeHead(201, { 'content-type': 'application/json', 'x-one': 'yes' });
      res.end('{"ok":true}');
    });
    const response = await client().fetch(`${server.url}/mcp?x=1`, {
      method: 'POST',
      headers: new Headers({ 'mcp-session-id': 's-1' }),
      body: '{"jsonrpc":"2.0"}',
    });
    expect(response).toBeInstanceOf(Response);
    expect(response.status).toBe(201);
    expect(response.statusText).toBe('Created');
    expect(response.url).toBe(`${server.url}/mcp?x=1`);
    expect(response.headers.get('x-one')).toBe('yes');
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await response.json()).toEqual({ ok: true });
    expect(seen[0]).toMatchObject({
      method: 'POST',
      body: '{"jsonrpc":"2.0"}',
      headers: {
        'mcp-session-id': 's-1',
        'content-type': 'text/plain;charset=UTF-8',
        accept: '*/*',
        'user-agent': 'node',
      },
    });
  });

  it("keeps the caller's content type and accept, and sends form parameters as a form", async () => {
    const { server, seen } = await recording((_seen, res) => res.end('ok'));
    const http = client();
    await (
      await http.fetch(server.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: '{}',
      })
    ).text();
    await (
      await http.fetch(server.url, {
        method: 'POST',
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'r t' }),
      })
    ).text();
    await (await http.fetch(server.url, { method: 'PUT', body: new TextEncoder().encode('bytes') })).text();
    expect(seen[0]?.headers['content-type']).toBe('application/json');
    expect(seen[0]?.headers.accept).toBe('application/json, text/event-stream');
    expect(seen[1]?.headers['content-type']).toBe('application/x-www-form-urlencoded;charset=UTF-8');
    expect(seen[1]?.body).toBe('grant_type=refresh_token&refresh_token=r+t');
    expect(seen[2]).toMatchObject({ method: 'PUT', body: 'bytes' });
  });

  it('answers 204 and HEAD with no body, and reuses the connection after them', async () => {
    const { server, seen } = await recording((one, res) => {
      if (one.method === 'DELETE') {
        res.writeHead(204);
        res.end();
      } else res.end('a body HEAD must not show');
    });
    const http = client(1);
    const deleted = await http.fetch(server.url, { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeNull();
    const head = await http.fetch(server.url, { method: 'HEAD' });
    expect(head.body).toBeNull();
    expect(await (await http.fetch(server.url)).text()).toBe('a body HEAD must not show');
    expect(seen.map((s) => s.method)).toEqual(['DELETE', 'HEAD', 'GET']);
  });

  it('fails as fetch does: a TypeError whose cause says what went wrong', async () => {
    const server = await startHttp((_req, res) => res.end());
    const url = server.url;
    await server.close();
    const err = await client()
      .fetch(url, { method: 'POST', body: '{}' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect((err as TypeError).message).toBe('fetch failed');
    expect((err as { cause?: { code?: string } }).cause?.code).toBe('ECONNREFUSED');
  });

  it('refuses a status outside 200 to 599 as fetch failed, saying which, and frees the socket', async () => {
    const { server } = await recording((one, res) => {
      res.writeHead(one.method === 'POST' ? 600 : 200);
      res.end('body');
    });
    const http = client(1);
    const err = await http.fetch(server.url, { method: 'POST', body: '{}' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect((err as TypeError).message).toBe('fetch failed');
    expect(String((err as { cause?: unknown }).cause)).toContain(
      'answered with HTTP status 600, outside 200 to 599',
    );
    // The one socket of the origin was let go: the next request is answered.
    expect(await (await http.fetch(server.url)).text()).toBe('body');
  });

  it('lets go of the socket of an answer dropped unread, once it is collected', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const server = track(await startHttp((_req, res) => res.end('x'.repeat(256 * 1024))));
    // One socket for the origin: while the unread answer holds it, the next request cannot be sent.
    const http = client(1);
    await (async () => {
      const unread = await http.fetch(server.url, { method: 'POST', body: '{}' });
      expect(unread.status).toBe(200);
    })();
    const next = http.fetch(server.url).then((r) => r.text());
    let settled = false;
    void next.finally(() => {
      settled = true;
    });
    // Collects until the socket comes free: as long as that takes on a loaded machine, up to the shared bound.
    for (const deadline = Date.now() + CONDITION_TIMEOUT_MS; !settled && Date.now() < deadline; ) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(settled, 'the next request still waits for the socket the unread answer holds').toBe(true);
    expect((await next).length).toBe(256 * 1024);
  });
});

describe('answers read whole before fetch resolves', () => {
  const json = '{"jsonrpc":"2.0","id":1,"result":{"text":"héllo"}}';

  it('hands out a JSON answer as a Response that can be read once, as fetch does', async () => {
    const { server } = await recording((_seen, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(json);
    });
    const response = await client().fetch(`${server.url}/mcp`, { method: 'POST', body: '{}' });
    expect(response).toBeInstanceOf(Response);
    expect(response.url).toBe(`${server.url}/mcp`);
    expect(response.bodyUsed).toBe(false);
    const copy = response.clone();
    expect(await response.json()).toEqual(JSON.parse(json));
    expect(response.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow(TypeError);
    expect(() => response.clone()).toThrow(TypeError);
    expect(copy.url).toBe(`${server.url}/mcp`);
    expect(new TextDecoder().decode(await copy.arrayBuffer())).toBe(json);
  });

  it('gives the body as a stream of the bytes when asked for it, in every format', async () => {
    const { server } = await recording((_seen, res) => {
      res.writeHead(200, { 'content-type': 'application/problem+json' });
      res.end(json);
    });
    const http = client();
    const streamed = await http.fetch(server.url, { method: 'POST', body: '{}' });
    const reader = streamed.body?.getReader();
    let text = '';
    for (let chunk = await reader?.read(); chunk !== undefined && !chunk.done; chunk = await reader?.read())
      text += new TextDecoder().decode(chunk.value, { stream: true });
    expect(text).toBe(json);
    expect(streamed.bodyUsed).toBe(true);
    const blob = await (await http.fetch(server.url, { method: 'POST', body: '{}' })).blob();
    expect(await blob.text()).toBe(json);
    const answer = (await http.fetch(server.url, { method: 'POST', body: '{}' })) as Response & {
      bytes(): Promise<Uint8Array>;
    };
    const bytes = await answer.bytes();
    expect(new TextDecoder().decode(bytes)).toBe(json);
    const read = await http.fetch(server.url, { method: 'POST', body: '{}' });
    await read.text();
    expect(read.body?.locked).toBe(true);
    expect(read.bodyUsed).toBe(true);
  });

  it('answers an accepted notification with an empty body that reads as empty text', async () => {
    const { server } = await recording((_seen, res) => {
      res.writeHead(202, { 'content-length': '0' });
      res.end();
    });
    const response = await client().fetch(server.url, { method: 'POST', body: '{}' });
    expect(response.status).toBe(202);
    expect(await response.text()).toBe('');
  });

  it('leaves an event stream a stream: fetch resolves before the stream ends', async () => {
    let finish: (() => void) | undefined;
    const { server } = await recording((_seen, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      finish = () => res.end('data: two\n\n');
    });
    const response = await client().fetch(server.url, { method: 'POST', body: '{}' });
    const reader = response.body?.getReader();
    const first = await reader?.read();
    expect(new TextDecoder().decode(first?.value)).toBe('data: one\n\n');
    finish?.();
    const second = await reader?.read();
    expect(new TextDecoder().decode(second?.value)).toBe('data: two\n\n');
  });

  it('rejects with the abort reason when the signal fires while a JSON body is still arriving', async () => {
    let started: (() => void) | undefined;
    const bodyStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    const { server } = await recording((_seen, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"jsonrpc":', () => started?.());
    });
    const controller = new AbortController();
    const pending = client().fetch(server.url, { method: 'POST', body: '{}', signal: controller.signal });
    await bodyStarted;
    const reason = new Error('the caller gave up');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it('fails as fetch does when the connection drops in the middle of a JSON body', async () => {
    const { server } = await recording((_seen, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"jsonrpc":', () => res.socket?.destroy());
    });
    const err = await client()
      .fetch(server.url, { method: 'POST', body: '{}' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect((err as TypeError).message).toBe('fetch failed');
  });
});
