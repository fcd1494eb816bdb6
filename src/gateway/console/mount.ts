/**
 * Where the operator console is served (issue 41): below a path of the gateway's own listener, behind the same
 * front door, or on a listener of its own (the gateway's TLS settings, its own Host and Origin screening, the same
 * credential checks). Either way it is refused off loopback unless callers authenticate and operators are named.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer, type ServerOptions as HttpsServerOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { FrontDoor, type FrontDoorOptions, type IncomingRequest, LOOPBACK_HOSTS } from '../front-door.js';
import { type ConsoleDeps, OperatorConsole } from './console.js';

/** The console, mounted. */
export interface ConsoleMount {
  /** Where an operator opens it. */
  readonly url: URL;
  /** Whether a request to `path` on the gateway's own listener is the console's. */
  owns(path: string): boolean;
  /** Answers a request the gateway's front door let through (path mode). */
  handle(request: Request, incoming: IncomingRequest): Promise<Response>;
  close(): Promise<void>;
}

/** Options of {@link mountConsole}: the console's parts and the gateway listener's. */
export interface MountOptions {
  deps: ConsoleDeps;
  /** The gateway listener's front door, its host and its URL. */
  door: FrontDoor;
  host: string;
  gatewayUrl: URL;
  /** What the gateway's front door was built with, for a listener of the console's own. */
  doorOptions: FrontDoorOptions;
  tls: HttpsServerOptions | undefined;
}

export async function mountConsole(options: MountOptions): Promise<ConsoleMount> {
  const { deps } = options;
  const operatorConsole = new OperatorConsole(deps);
  const path = deps.config.path;
  if (path !== undefined) {
    OperatorConsole.checkExposure(options.host, options.door, deps.gateway);
    return {
      url: new URL(path, options.gatewayUrl),
      owns: (p) => p === path || p.startsWith(`${path}/`),
      handle: (request, incoming) =>
        operatorConsole.handle(
          request,
          incoming as IncomingRequest & { socket: unknown },
          options.door,
          path,
        ),
      close: async () => operatorConsole.close(),
    };
  }
  const listen = deps.config.listen as { host: string; port: number };
  const loopback = LOOPBACK_HOSTS.has(listen.host);
  const server: HttpServer = options.tls === undefined ? createServer() : createHttpsServer(options.tls);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const hostForUrl = listen.host.includes(':') ? `[${listen.host}]` : listen.host;
  const url = new URL(`${options.tls === undefined ? 'http' : 'https'}://${hostForUrl}:${port}/`);
  const door = new FrontDoor({
    ...options.doorOptions,
    allowedHosts: [url.hostname, ...(loopback ? ['localhost', '127.0.0.1', '[::1]'] : [])],
    resourceUrl: url,
    loopback,
    // The console's own origin only: the MCP endpoint's browser origins are not the console's.
    allowedOrigins: [],
  });
  try {
    OperatorConsole.checkExposure(listen.host, door, deps.gateway);
  } catch (err) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw err;
  }
  const listener = getRequestListener(async (request, env) => {
    const screened = door.screen(request);
    if (screened !== undefined) return screened;
    return operatorConsole.handle(request, env.incoming, door, '');
  });
  server.on('request', (req, res) => void listener(req, res));
  return {
    url,
    owns: () => false,
    handle: async () => new Response('Not found.\n', { status: 404 }),
    close: async () => {
      operatorConsole.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
