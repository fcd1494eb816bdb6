/**
 * Issue 18, item 2: a failed remote connect says why in one line: the network reason hidden in undici's cause
 * chain, and a server's HTML error page reduced to its status and title. Issue 39: a URL that answers with
 * something other than MCP (an HTML 404, an HTTP+SSE endpoint asked for Streamable HTTP) is named as such, with
 * its status and content type and what to try.
 */
import { describe, expect, it } from 'vitest';
import { causeMessages, serverText } from '../../src/interop/describe-error.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { startEverything } from '../helpers/http-fixtures.js';
import { freePort } from '../helpers/net.js';
import { closesAfterEach } from '../remote/cleanup.js';
import { startHttp } from '../remote/net-fixtures.js';

const track = closesAfterEach();

function manager(): MCPClientManager {
  return track(new MCPClientManager({ capabilities: new CapabilitySet() }));
}

/** The error of a connect that must fail. */
async function connectError(config: {
  name: string;
  transport: 'http' | 'sse' | 'auto';
  url: string;
}): Promise<Error> {
  return manager()
    .connectServer({ ...config, reconnect: { enabled: false } })
    .then(
      () => new Error('connected'),
      (e: unknown) => e as Error,
    );
}

describe('remote connect errors', () => {
  it('nothing listening: leads with "nothing is listening at 127.0.0.1:PORT", the protocol step kept in cause', async () => {
    const port = await freePort();
    const err = await connectError({ name: 'gone', transport: 'http', url: `http://127.0.0.1:${port}/mcp` });
    // Issue 39: what the user can act on, first and alone; not "Version negotiation probe failed: fetch failed".
    expect(err.message).toBe(
      `Server 'gone' failed to connect: nothing is listening at 127.0.0.1:${port} (connection refused): start the server, or check the host and port of its url.`,
    );
    // The detail is still there for --verbose: the step that noticed it, and the system error.
    const detail = causeMessages(err).join('\n');
    expect(detail).toMatch(/fetch failed/);
    expect(detail).toContain('ECONNREFUSED');
  });

  it('a wrong path: the status and the page title, not the whole HTML page', async () => {
    const page = `<!DOCTYPE html><html><head><title>404 Not Found</title><style>body{color:red}</style></head><body><h1>Not Found</h1><p>${'filler '.repeat(400)}</p></body></html>`;
    const server = track(
      await startHttp((req, res) => {
        req.resume();
        res.writeHead(404, { 'content-type': 'text/html' }).end(page);
      }),
    );
    const err = await manager()
      .connectServer({
        name: 'wrong',
        transport: 'http',
        url: `${server.url}/wrong-path`,
        reconnect: { enabled: false },
      })
      .then(
        () => new Error('connected'),
        (e: unknown) => e as Error,
      );
    expect(err.message).toContain('404');
    expect(err.message).toContain('404 Not Found');
    expect(err.message).not.toContain('<');
    expect(err.message).not.toContain('filler filler filler');
    expect(err.message.length).toBeLessThan(600);
  });

  it('an HTML 404 (an Express "Cannot POST" page): the status, the content type, not MCP, and what to try', async () => {
    const server = track(
      await startHttp((req, res) => {
        req.resume();
        res
          .writeHead(404, { 'content-type': 'text/html; charset=utf-8' })
          .end(
            `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Error</title></head><body><pre>Cannot ${req.method} ${req.url}</pre></body></html>`,
          );
      }),
    );
    const err = await connectError({ name: 'site', transport: 'http', url: `${server.url}/api` });
    expect(err).toMatchObject({ code: 'CONNECTION_FAILED' });
    expect(err.message).toBe(
      `Server 'site' failed to connect: POST ${server.url}/api answered HTTP 404 Not Found (text/html: "Cannot POST /api"): this URL does not speak MCP (Streamable HTTP). Check the path (servers often serve MCP at /mcp); if the server speaks the older HTTP+SSE transport, set type: sse (transport: 'sse') with its SSE endpoint (often /sse).`,
    );
    expect(err.message).not.toContain('failed to connect: Error.');
  });

  it('type http pointed at an HTTP+SSE endpoint (server-everything in sse mode): says to set type: sse', async () => {
    // The machine may be busy: the server's own start is not what this test measures.
    const everything = track(await startEverything('sse', { timeoutMs: 90_000 }));
    const url = everything.sseUrl;
    const err = await connectError({ name: 'everything', transport: 'http', url });
    expect(err.message).toContain(`POST ${url} answered HTTP 404`);
    expect(err.message).toContain('text/html');
    expect(err.message).toContain('does not speak MCP (Streamable HTTP)');
    expect(err.message).toContain(
      "this path looks like an HTTP+SSE endpoint: set type: sse (transport: 'sse')",
    );
    // The advice holds: the same URL connects as sse.
    const sse = manager();
    await sse.connectServer({ name: 'everything', transport: 'sse', url, reconnect: { enabled: false } });
    expect(sse.tools.length).toBeGreaterThan(0);
  });

  it('a web page where the endpoint should be (200 text/html): not MCP either', async () => {
    const server = track(
      await startHttp((req, res) => {
        req.resume();
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end('<html><head><title>Welcome to nginx!</title></head></html>');
      }),
    );
    const err = await connectError({ name: 'web', transport: 'http', url: `${server.url}/mcp` });
    expect(err.message).toContain(`POST ${server.url}/mcp answered HTTP 200 OK (text/html)`);
    expect(err.message).toContain(
      'does not speak MCP (Streamable HTTP). Check that this is the endpoint the server documents',
    );
  });

  it('serverText keeps plain text, trims long text, and reduces HTML without a title to its words', () => {
    expect(serverText('  plain\n  text ')).toBe('plain text');
    expect(serverText('x'.repeat(500))).toHaveLength(201);
    expect(serverText('<html><body><h1>Gateway</h1> <p>upstream &amp; down</p></body></html>')).toBe(
      'Gateway upstream & down',
    );
  });
});
