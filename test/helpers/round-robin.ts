// A round-robin HTTP balancer for tests of several gateway processes: each request goes to the next backend in
// turn (nothing sticky), bodies stream both ways, and every request is logged with the backend that got it.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the balancer passed on: which backend got it, and its `Mcp-Method` header (if any). */
export interface BalancedRequest {
  backend: number;
  method: string | undefined;
}

export interface RoundRobin extends AsyncDisposable {
  server: Server;
  /** The balancer's own origin, e.g. `http://127.0.0.1:41234/`. */
  url: URL;
  /** Requests served per backend, in the order of `targets`. */
  served(): number[];
  /** Every request passed on, in order. */
  log(): readonly BalancedRequest[];
  close(): Promise<void>;
}

/** Starts a balancer over `targets` on a free loopback port. */
export async function roundRobin(targets: readonly URL[]): Promise<RoundRobin> {
  const log: BalancedRequest[] = [];
  let next = 0;
  const server = createServer((req, res) => {
    const backend = next++ % targets.length;
    const header = req.headers['mcp-method'];
    log.push({ backend, method: typeof header === 'string' ? header : undefined });
    const target = targets[backend] as URL;
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    // A backend that is gone: the client sees a failed request, as behind a real balancer without retries.
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return {
    server,
    url: new URL(`http://127.0.0.1:${port}/`),
    served: () => targets.map((_, i) => log.filter((r) => r.backend === i).length),
    log: () => [...log],
    close,
    [Symbol.asyncDispose]: close,
  };
}
