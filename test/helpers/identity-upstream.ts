// Upstream MCP servers over Streamable HTTP for issue 41, both of which verify the bearer of every request against
// an authorization server's JWKS (audience: their own URL) and record every Authorization header they saw:
// - `modern`: protocol 2026-07-28 (the v2 server package's createMcpHandler, stateless);
// - `legacy`: 2025-era (SDK 1.x, one Mcp-Session-Id per session; a session belongs to the subject that opened it,
//   and a request of another subject on it is refused with 403).
// Tool `whoami` answers with the verified claims of the token the request carried; the legacy `ask_name` asks its
// client for a name (elicitation) on the session of the call.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { McpServer as LegacyMcpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { createRemoteJWKSet, type JWTPayload, jwtVerify } from 'jose';

export interface IdentityUpstream extends AsyncDisposable {
  /** The MCP endpoint (also the audience its tokens must name). */
  readonly url: string;
  /** Every Authorization header value received, in order (including refused ones). */
  readonly authorizations: string[];
  /** The verified claims of each `tools/call` that reached a tool. */
  readonly calls: JWTPayload[];
  /** Sessions opened (legacy), sessions open now, and the subject each open one belongs to. */
  readonly sessions: { opened: number; open: () => number; owners: () => string[] };
  /** Calls of the legacy `hold` tool waiting now; `release()` lets them answer. */
  held(): number;
  /** The subjects of the `hold` calls cancelled, in order. */
  readonly cancelled: string[];
  release(): void;
  close(): Promise<void>;
}

const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });

export async function startIdentityUpstream(
  era: 'modern' | 'legacy',
  options: { jwksUrl: string; issuer: string },
): Promise<IdentityUpstream> {
  const jwks = createRemoteJWKSet(new URL(options.jwksUrl));
  const authorizations: string[] = [];
  const calls: JWTPayload[] = [];
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  const verify = async (header: string | undefined): Promise<JWTPayload | undefined> => {
    if (header !== undefined) authorizations.push(header);
    const token = /^Bearer (.+)$/.exec(header ?? '')?.[1];
    if (token === undefined) return undefined;
    try {
      return (await jwtVerify(token, jwks, { issuer: options.issuer, audience: url })).payload;
    } catch {
      return undefined;
    }
  };
  const whoami = (claims: JWTPayload | undefined) => {
    if (claims !== undefined) calls.push(claims);
    return text(JSON.stringify(claims ?? null));
  };
  const sessions = { opened: 0, open: () => 0, owners: (): string[] => [] };
  let waiting: (() => void)[] = [];
  const cancelled: string[] = [];

  if (era === 'modern') {
    const handler = createMcpHandler(
      (ctx) => {
        const mcp = new McpServer({ name: 'identity-modern', version: '1.0.0' });
        const claims = ctx.authInfo?.extra as JWTPayload | undefined;
        mcp.registerTool('whoami', { description: 'The claims of the token.' }, async () => whoami(claims));
        mcp.registerTool('write_note', { description: 'Writes a note.' }, async () => whoami(claims));
        return mcp;
      },
      { onerror: () => {} },
    );
    const listener = getRequestListener(async (request) => {
      const claims = await verify(request.headers.get('authorization') ?? undefined);
      if (claims === undefined) return unauthorized();
      const authInfo = {
        token: 'verified',
        clientId: String(claims.client_id ?? ''),
        scopes: [],
        extra: claims,
      };
      return handler.fetch(request, { authInfo });
    });
    server.on('request', (req, res) => void listener(req, res));
  } else {
    const open = new Map<string, { transport: StreamableHTTPServerTransport; owner: string }>();
    sessions.open = () => open.size;
    sessions.owners = () => [...open.values()].map((session) => session.owner);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      void (async () => {
        const claims = await verify(req.headers.authorization);
        if (claims?.sub === undefined) return void sendUnauthorized(res);
        const id = req.headers['mcp-session-id'];
        if (typeof id === 'string') {
          const session = open.get(id);
          if (session === undefined) return void res.writeHead(404).end();
          // MCP security best practice: a session is bound to the user that opened it.
          if (session.owner !== claims.sub) return void res.writeHead(403).end();
          (req as IncomingMessage & { auth?: unknown }).auth = {
            token: 'verified',
            clientId: '',
            scopes: [],
            extra: claims,
          };
          return session.transport.handleRequest(req, res);
        }
        if (req.method !== 'POST') return void res.writeHead(405).end();
        const owner = claims.sub;
        const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => {
            sessions.opened++;
            open.set(sid, { transport, owner });
          },
        });
        transport.onclose = () => {
          if (transport.sessionId !== undefined) open.delete(transport.sessionId);
        };
        const mcp = new LegacyMcpServer({ name: 'identity-legacy', version: '1.0.0' });
        const tool = (_args: unknown, extra: { authInfo?: { extra?: Record<string, unknown> } }) =>
          whoami(extra.authInfo?.extra as JWTPayload | undefined);
        mcp.registerTool('whoami', { description: 'The claims of the token.' }, (extra) =>
          tool(undefined, extra),
        );
        mcp.registerTool('write_note', { description: 'Writes a note.' }, (extra) => tool(undefined, extra));
        mcp.registerTool(
          'ask_name',
          { description: "Asks for a name; answers with it and the token's subject." },
          async (extra) => {
            // On the stream of this call's POST, so on the session it came on: the caller's.
            const answer = await extra.sendRequest(
              {
                method: 'elicitation/create',
                params: {
                  message: 'What is your name?',
                  requestedSchema: {
                    type: 'object',
                    properties: { name: { type: 'string' } },
                    required: ['name'],
                  },
                },
              },
              ElicitResultSchema,
              { timeout: 10_000 },
            );
            const claims = extra.authInfo?.extra as JWTPayload | undefined;
            return text(JSON.stringify({ sub: claims?.sub ?? null, name: answer.content?.name ?? null }));
          },
        );
        mcp.registerTool('hold', { description: 'Answers once released.' }, async (extra) => {
          await new Promise<void>((resolve) => {
            waiting.push(resolve);
            // A cancellation reaches the call only on the session it runs on.
            extra.signal.addEventListener('abort', () => {
              cancelled.push(String((extra.authInfo?.extra as JWTPayload | undefined)?.sub));
              resolve();
            });
          });
          return tool(undefined, extra);
        });
        await mcp.connect(transport);
        (req as IncomingMessage & { auth?: unknown }).auth = {
          token: 'verified',
          clientId: '',
          scopes: [],
          extra: claims,
        };
        await transport.handleRequest(req, res);
      })().catch(() => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
  }
  const close = async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  };
  const release = () => {
    for (const resolve of waiting) resolve();
    waiting = [];
  };
  const held = () => waiting.length;
  return {
    url,
    authorizations,
    calls,
    sessions,
    held,
    cancelled,
    release,
    close,
    [Symbol.asyncDispose]: close,
  };
}

function unauthorized(): Response {
  return new Response(JSON.stringify({ error: 'invalid_token' }), {
    status: 401,
    headers: { 'www-authenticate': 'Bearer error="invalid_token"', 'content-type': 'application/json' },
  });
}

function sendUnauthorized(res: ServerResponse): void {
  res.writeHead(401, {
    'www-authenticate': 'Bearer error="invalid_token"',
    'content-type': 'application/json',
  });
  res.end(JSON.stringify({ error: 'invalid_token' }));
}
