/**
 * `openBrowser` honors `BROWSER` (issue 9): the whole value is one command, run with the sign-in URL as its one
 * argument and no shell. The command here is a real node script that reports what it got to a loopback server.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openBrowser } from '../../src/auth/loopback.js';

const cleanup: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A loopback server that resolves with the first request body it gets. */
async function reportServer(): Promise<{ url: string; report: Promise<string> }> {
  let server!: Server;
  const report = new Promise<string>((resolve) => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString('utf8');
      });
      req.on('end', () => {
        res.end('ok');
        resolve(body);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, report };
}

/** An executable script in a directory whose name has a space: the value of BROWSER is not split. */
function browserCommand(reportUrl: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'interlock-browser-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'my browser'));
  const path = join(dir, 'my browser', 'open.mjs');
  writeFileSync(
    path,
    `#!${process.execPath}
await fetch(${JSON.stringify(reportUrl)}, { method: 'POST', body: JSON.stringify(process.argv.slice(2)) });
`,
  );
  chmodSync(path, 0o755);
  return path;
}

describe('openBrowser', () => {
  it('runs the BROWSER command with the URL as its one argument, without a shell', async () => {
    const { url, report } = await reportServer();
    const lines: string[] = [];
    // Characters a shell would act on stay in the one argument.
    const signIn = new URL('http://127.0.0.1:9/authorize?a=1&b=$(touch x);c=`y`|z');
    await openBrowser(signIn, (l) => lines.push(l), { env: { BROWSER: browserCommand(url) } });
    expect(JSON.parse(await report)).toEqual([signIn.href]);
    expect(lines).toEqual([`Open this URL to sign in: ${signIn.href}`]);
  });

  it('prints the URL, then says so when the BROWSER command cannot start', async () => {
    const lines: string[] = [];
    const signIn = new URL('http://127.0.0.1:9/authorize?state=s');
    await openBrowser(signIn, (l) => lines.push(l), { env: { BROWSER: '/nonexistent/browser' } });
    expect(lines).toEqual([
      `Open this URL to sign in: ${signIn.href}`,
      "Could not run the BROWSER command '/nonexistent/browser' (ENOENT); open the URL above yourself.",
    ]);
  });
});
