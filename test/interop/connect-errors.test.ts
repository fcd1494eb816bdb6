/**
 * Issue 18, item 2: a failed remote connect says why in one line: the network reason hidden in undici's cause
 * chain, and a server's HTML error page reduced to its status and title.
 */
import { describe, expect, it } from 'vitest';
import { serverText } from '../../src/interop/describe-error.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { freePort } from '../helpers/net.js';
import { closesAfterEach } from '../remote/cleanup.js';
import { startHttp } from '../remote/net-fixtures.js';

const track = closesAfterEach();

function manager(): MCPClientManager {
  return track(new MCPClientManager({ capabilities: new CapabilitySet() }));
}

describe('remote connect errors', () => {
  it('nothing listening: "connection refused at 127.0.0.1:PORT", not "fetch failed"', async () => {
    const port = await freePort();
    const err = await manager()
      .connectServer({
        name: 'gone',
        transport: 'http',
        url: `http://127.0.0.1:${port}/mcp`,
        reconnect: { enabled: false },
      })
      .then(
        () => new Error('connected'),
        (e: unknown) => e as Error,
      );
    expect(err.message).toContain(`connection refused at 127.0.0.1:${port}`);
    expect(err.message).not.toMatch(/fetch failed\.?$/);
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

  it('serverText keeps plain text, trims long text, and reduces HTML without a title to its words', () => {
    expect(serverText('  plain\n  text ')).toBe('plain text');
    expect(serverText('x'.repeat(500))).toHaveLength(201);
    expect(serverText('<html><body><h1>Gateway</h1> <p>upstream &amp; down</p></body></html>')).toBe(
      'Gateway upstream & down',
    );
  });
});
