/**
 * The shared dispatcher honours HTTP_PROXY and NO_PROXY (issue 4: "over undici with one shared dispatcher
 * (keep-alive; HTTP(S)_PROXY / NO_PROXY honored)"). This file sets the variables before any provider runs:
 * the dispatcher reads HTTP_PROXY when it is first created.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeSharedModelDispatcher } from '../../src/providers/http.js';
import { OpenAIChatProvider } from '../../src/providers/index.js';
import { type FakeApi, openAIResponse, startFakeApi } from './fake-api.js';

let api: FakeApi;
let proxy: Server;
const tunnels: string[] = [];
const sockets = new Set<Socket>();
const saved = {
  HTTP_PROXY: process.env.HTTP_PROXY,
  NO_PROXY: process.env.NO_PROXY,
  http_proxy: process.env.http_proxy,
  no_proxy: process.env.no_proxy,
};

beforeAll(async () => {
  api = await startFakeApi();
  // A forward proxy that tunnels every CONNECT to the fake API, whatever host was asked for.
  proxy = createServer((_req, res) => res.writeHead(405).end());
  proxy.on('connect', (req, client: Socket) => {
    tunnels.push(req.url ?? '');
    const upstream = connect(api.port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  delete process.env.http_proxy;
  delete process.env.no_proxy;
  process.env.HTTP_PROXY = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  process.env.NO_PROXY = '127.0.0.1';
});

afterAll(async () => {
  await closeSharedModelDispatcher();
  for (const s of sockets) s.destroy();
  await new Promise<void>((done) => proxy.close(() => done()));
  await api.close();
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

describe('the shared model dispatcher', () => {
  it('sends requests through HTTP_PROXY, except to hosts in NO_PROXY', async () => {
    api.reply(
      { body: openAIResponse({ content: 'via proxy' }) },
      { body: openAIResponse({ content: 'direct' }) },
    );
    const proxied = new OpenAIChatProvider({
      baseURL: 'http://models.example.test/v1',
      model: 'm',
      maxRetries: 0,
    });
    expect((await proxied.generate({ messages: [{ role: 'user', content: 'x' }], tools: [] })).text).toBe(
      'via proxy',
    );
    expect(tunnels).toEqual(['models.example.test:80']);
    expect(api.requests[0]?.headers.host).toBe('models.example.test');

    const direct = new OpenAIChatProvider({ baseURL: `${api.url}/v1`, model: 'm', maxRetries: 0 });
    expect((await direct.generate({ messages: [{ role: 'user', content: 'x' }], tools: [] })).text).toBe(
      'direct',
    );
    expect(tunnels).toHaveLength(1);
  });
});
