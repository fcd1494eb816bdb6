import { connect, createServer } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

/** A loopback TCP port that was free a moment ago. Prefer port 0 where the server can report its port. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('freePort: no TCP address');
  return address.port;
}

/** True if something accepts TCP connections on 127.0.0.1:`port` right now. */
export function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** Polls until 127.0.0.1:`port` accepts connections; `stop()` returning a reason aborts the wait. */
export async function waitForPort(
  port: number,
  { timeoutMs = 10_000, stop }: { timeoutMs?: number; stop?: () => string | undefined } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reason = stop?.();
    if (reason !== undefined) throw new Error(reason);
    if (await acceptsConnections(port)) return;
    if (Date.now() >= deadline)
      throw new Error(`Nothing listened on 127.0.0.1:${port} within ${timeoutMs} ms`);
    await delay(25);
  }
}
