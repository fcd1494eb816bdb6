/**
 * `Gateway` (issue 17): a manager's servers as one MCP server that any client can use, over stdio (one local
 * client) or Streamable HTTP (many clients, both protocol eras, no sticky sessions: every HTTP request gets a
 * fresh server instance from the SDK's `createMcpHandler`). Each caller is a principal; its capability set
 * picks which tools it sees and decides each call, in that caller's flow state (issue 42, see flow-states.ts).
 * Operations: `/healthz`, `/readyz`, `/metrics` (Prometheus text), and a graceful `close()` that drains calls in
 * flight before the listener goes.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer, type ServerOptions as HttpsServerOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import {
  type AuthInfo,
  createMcpHandler,
  getOAuthProtectedResourceMetadataUrl,
  type McpHttpHandler,
  type McpServerFactory,
  requireBearerAuth,
  type Server,
  type Transport,
} from '@modelcontextprotocol/server';
import { type StdioServerHandle, serveStdio } from '@modelcontextprotocol/server/stdio';
import {
  configuredMethods,
  type GatewayConfig,
  type GatewayConfigInput,
  GatewayConfigSchema,
  type GatewayTlsConfig,
  shorthandMethod,
} from '../config/gateway.js';
import { GatewayFlowOptionsSchema } from '../config/gateway-flow.js';
import { ConfigError } from '../errors.js';
import { type Logger, silentLogger } from '../interop/logger.js';
import type { CapabilityView, MCPClientManager } from '../interop/manager.js';
import { tupleKey } from '../json.js';
import type { CapabilitySet } from '../security/capability-set.js';
import type { AuditSink } from '../security/types.js';
import type { SharedPolicy } from '../state/shared-policy.js';
import type { StateStore } from '../state/types.js';
import { toConfigIssues } from '../zod-issues.js';
import { AuthThrottle } from './auth-throttle.js';
import { PrincipalPolicies } from './bindings.js';
import { AuditFeed, followFleet } from './console/feed.js';
import { type ConsoleMount, mountConsole } from './console/mount.js';
import type { ConsolePublisher } from './console/publish.js';
import { type FlowScope, FlowStates } from './flow-states.js';
import { FrontDoor, LOOPBACK_HOSTS } from './front-door.js';
import { fetchMcp, keepConnections } from './http-bridge.js';
import { GatewayMetrics } from './metrics.js';
import { createPrincipalVerifier, type Principal, principalOf } from './principals.js';
import type { ServerRequestRelay } from './relay.js';
import {
  createGatewayServer,
  type GatewayServerOptions,
  type GatewayToolCall,
  toolCaller,
} from './server.js';
import { asCaller, takesCallerIdentity } from './upstream-identity.js';

/** Options of {@link Gateway}. */
export interface GatewayOptions {
  /** The connected servers, and the project's capability set (every principal's set derives from it). */
  manager: MCPClientManager;
  /** The project file's `gateway` section (or the same in code). */
  config?: GatewayConfigInput | undefined;
  /** Where every decision is recorded; the gateway's calls are audited like in-process calls. */
  audit?: AuditSink | undefined;
  /** The name and version the gateway announces. @default mcp-interlock gateway */
  serverInfo?: { name: string; version: string } | undefined;
  /** Fetches JWKS documents (default: global fetch). */
  fetch?: typeof fetch | undefined;
  /**
   * Relays the elicitation and sampling requests upstream servers make during a call to the client that made
   * it. The manager must have been created with `relay.handlers`; without a relay those requests are refused.
   */
  relay?: ServerRequestRelay | undefined;
  /** Where the gateway warns the operator (a tool listed under another name, ...). @default silent */
  logger?: Logger | undefined;
  /**
   * The fleet's shared state (the project's `state` section): replicas route callers' answers through it, and
   * the operator console follows its audit stream.
   */
  store?: StateStore | undefined;
  /** The fleet's shared policy: the operator console shows its revision and revokes its rules. */
  sharedPolicy?: SharedPolicy | undefined;
  /** Publishes the project file's policy from the operator console (`interlock serve` passes one). */
  policyPublisher?: ConsolePublisher | undefined;
}

/** What {@link Gateway.listen} resolves with. */
export interface GatewayAddress {
  /** The MCP endpoint, e.g. `http://127.0.0.1:8080/mcp`. */
  url: URL;
  port: number;
  /** The operator console's address, when `gateway.console` turns it on. */
  console?: URL | undefined;
}

/** The project's servers as one MCP server, gated per caller. */
export class Gateway {
  readonly config: GatewayConfig;
  readonly metrics: GatewayMetrics;
  readonly #manager: MCPClientManager;
  readonly #policies: PrincipalPolicies;
  readonly #audit: AuditSink | undefined;
  readonly #serverInfo: { name: string; version: string };
  readonly #fetch: typeof fetch | undefined;
  readonly #relay: ServerRequestRelay | undefined;
  readonly #views = new Map<CapabilitySet, CapabilityView>();
  readonly #logger: Logger;
  /** Tools already warned about (once per process, not once per tools/list). */
  readonly #renamed = new Set<string>();
  #inFlight = 0;
  #idle: (() => void) | undefined;
  #draining = false;
  #closed: Promise<void> | undefined;
  #http: { server: HttpServer; handler: McpHttpHandler } | undefined;
  #throttle: AuthThrottle | undefined;
  #stdio: StdioServerHandle | undefined;
  /** The instance serving the stdio client, for list-changed notices. */
  #stdioServer: Server | undefined;
  readonly #offToolsChanged: () => void;
  /** The flow state of each HTTP caller (issue 42); stdio's one session has its own. */
  readonly #flows: FlowStates;
  /** The operator console's tap on the audit sink (`gateway.console`), and the console once listening. */
  readonly #feed: AuditFeed | undefined;
  #console: ConsoleMount | undefined;
  readonly #options: GatewayOptions;

  constructor(options: GatewayOptions) {
    const parsed = GatewayConfigSchema.safeParse(options.config ?? {});
    if (!parsed.success) {
      throw new ConfigError('Invalid gateway options.', { issues: toConfigIssues(parsed.error, 'gateway') });
    }
    this.config = parsed.data;
    this.#manager = options.manager;
    this.#options = options;
    this.#feed = this.config.console && new AuditFeed(this.config.console.recentDecisions);
    this.#audit = this.#feed?.tee(options.audit) ?? options.audit;
    this.#fetch = options.fetch;
    this.#relay = options.relay;
    if (this.config.serverRequests !== undefined) {
      this.#relay?.configure(this.config.serverRequests, 'gateway.serverRequests');
    }
    this.#logger = options.logger ?? silentLogger;
    this.#serverInfo = options.serverInfo ?? { name: 'mcp-interlock-gateway', version: '0' };
    // Derives every binding now: one asking for more than the project policy allows fails here, at start.
    this.#policies = new PrincipalPolicies(
      options.manager.capabilities,
      this.config.principals,
      shorthandMethod(this.config),
    );
    const flow = GatewayFlowOptionsSchema.parse(this.config.flow ?? {});
    this.#flows = new FlowStates({
      ...flow,
      settings: () => options.manager.capabilities.flowLabels.flowOptions,
      onFull: (held) =>
        this.#logger.warn(
          `The gateway holds ${held} callers' flow states, its limit, none idle for gateway.flow.idleTimeoutMs (${flow.idleTimeoutMs} ms): new callers are refused with OVERLOADED. Raise gateway.flow.maxStates or lower gateway.flow.idleTimeoutMs.`,
        ),
    });
    this.metrics = new GatewayMetrics(options.manager, {
      flowStates: () => this.#flows.size,
      routed:
        this.#relay === undefined ? undefined : () => this.#relay?.routed ?? { forwarded: 0, served: 0 },
    });
    const announce = () => {
      this.#http?.handler.notify.toolsChanged();
      this.#stdioServer?.sendToolListChanged().catch(() => {});
    };
    options.manager.on('tools_changed', announce);
    this.#offToolsChanged = () => options.manager.off('tools_changed', announce);
  }

  /** Calls and HTTP requests in flight through the gateway (a graceful close waits for them). */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Serves the one client on this process's stdin/stdout (or `transport`), as the `stdio` principal. */
  serveStdio(options: { transport?: Transport } = {}): void {
    if (this.#stdio !== undefined) throw new ConfigError('The gateway already serves stdio.');
    const stdio = this.config.stdio ?? { subject: 'local' };
    const principal: Principal = {
      subject: stdio.subject,
      groups: stdio.groups ?? [],
      scopes: [],
      via: 'stdio',
    };
    // One client, one session for the life of the connection: one flow state, outside the bounded table.
    const flow = this.#flows.create();
    const scope: FlowScope = (work) => work(flow);
    this.#stdio = serveStdio(
      () => {
        const server = this.#serverFor(principal, scope);
        this.#stdioServer = server;
        return server;
      },
      options.transport === undefined ? {} : { transport: options.transport },
    );
  }

  /**
   * Starts the Streamable HTTP endpoint. Without `auth` it listens only on a loopback address (anyone who can
   * reach it could call every tool the policy allows); with `auth`, every request needs a valid credential.
   */
  async listen(overrides: { host?: string; port?: number } = {}): Promise<GatewayAddress> {
    if (this.#http !== undefined) throw new ConfigError('The gateway already listens on HTTP.');
    const http = { ...GatewayConfigSchema.shape.http.unwrap().parse({}), ...this.config.http, ...overrides };
    const certificates = http.tls?.clientCertificates ?? 'none';
    if (this.config.auth === undefined && certificates !== 'required' && !LOOPBACK_HOSTS.has(http.host)) {
      throw new ConfigError(
        `The gateway has no gateway.auth section, so it may listen only on loopback, not on '${http.host}'. Add gateway.auth (jwt, or apiKeys for development), require client certificates (gateway.http.tls), or listen on 127.0.0.1.`,
      );
    }
    // HTTP requests name no session (2026-07-28 has none; 2025-era clients are served statelessly): each
    // authenticated principal has one flow state, whatever connection or replica its requests come on.
    const factory: McpServerFactory = (ctx) => {
      const principal = this.#principal(ctx.authInfo);
      const flow = this.#flows.scope(tupleKey(principal.via, principal.subject));
      return this.#serverFor(principal, flow, ctx.authInfo?.token);
    };
    const handler = createMcpHandler(factory, { onerror: () => {} });
    // Replicas (issue 41): the fleet's sealing key, and answers routed to the replica that holds the call.
    if (this.config.replicas !== undefined || this.#options.store !== undefined) {
      await this.#relay?.replicate(this.config.replicas, this.#options.store);
    }
    const tls = http.tls === undefined ? undefined : await readTls(http.tls);
    const server = tls === undefined ? createServer() : createHttpsServer(tls);
    keepConnections(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(http.port, http.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const port = (server.address() as AddressInfo).port;
    const hostForUrl = http.host.includes(':') ? `[${http.host}]` : http.host;
    const url = new URL(`${tls === undefined ? 'http' : 'https'}://${hostForUrl}:${port}${http.path}`);
    const resourceUrl = new URL(http.resourceUrl ?? url.href);
    const allowedHosts = http.allowedHosts ?? [
      resourceUrl.hostname,
      ...(LOOPBACK_HOSTS.has(http.host) ? ['localhost', '127.0.0.1', '[::1]'] : []),
    ];
    const throttle = this.#authThrottle();
    try {
      await throttle?.share();
    } catch (err) {
      await new Promise((resolve) => server.close(resolve));
      throw err;
    }
    this.#throttle = throttle;
    const doorOptions = {
      allowedHosts,
      resourceUrl,
      loopback: LOOPBACK_HOSTS.has(http.host),
      allowedOrigins: http.allowedOrigins,
      bearer: this.#bearerGate(resourceUrl),
      certificates,
      operators: this.config.operators,
      shorthand: shorthandMethod(this.config),
      throttle,
      trustedProxies: http.trustedProxies,
    };
    const door = new FrontDoor(doorOptions);
    const consoleMount = await this.#mountConsole({
      door,
      doorOptions,
      host: http.host,
      gatewayUrl: url,
      tls,
    }).catch(async (err: unknown) => {
      // The console's settings are refused: the gateway does not listen without it.
      await new Promise((resolve) => server.close(resolve));
      await throttle?.close();
      throw err;
    });
    const metadata = this.#resourceMetadata(resourceUrl);
    const refuse = (response: Response) => {
      this.metrics.rejected(response.status);
      return response;
    };
    const listener = getRequestListener(async (request, env) => {
      // Host and Origin first, on every path (issue 38): nothing answers a rebound or cross-origin request.
      const screened = door.screen(request);
      if (screened !== undefined) return refuse(screened);
      const path = new URL(request.url).pathname;
      if (consoleMount?.owns(path)) return consoleMount.handle(request, env.incoming);
      if (path === '/healthz') return text(200, 'ok\n');
      if (path === '/readyz') return this.#readiness();
      if (path === '/metrics') {
        const denied = await door.metricsAccess(request, env.incoming);
        if (denied !== undefined) return refuse(denied);
        return new Response(await this.metrics.render(), {
          headers: { 'content-type': this.metrics.contentType },
        });
      }
      if (metadata !== undefined && path === metadata.path) return Response.json(metadata.document);
      if (path !== http.path) return text(404, `Not found. The MCP endpoint is at ${http.path}\n`);
      if (this.#draining) return text(503, 'The gateway is shutting down.\n');
      const authInfo = await door.authenticate(request, env.incoming);
      if (authInfo instanceof Response) return refuse(authInfo);
      return fetchMcp(
        { fetch: handler.fetch, factory, toolCall: (auth) => this.#toolCallFor(auth) },
        request,
        env.incoming,
        authInfo,
      );
    });
    server.on('request', (req, res) => {
      // A graceful close waits for MCP requests until their answer is sent (not only until the tool returns),
      // but not for 2026-07-28 listen streams, which stay open by design.
      if (req.method === 'POST' && req.headers['mcp-method'] !== 'subscriptions/listen') {
        this.#begin();
        res.once('close', () => this.#end());
      }
      void listener(req, res);
    });
    this.#http = { server, handler };
    return { url, port, ...(consoleMount === undefined ? {} : { console: consoleMount.url }) };
  }

  /**
   * Stops taking new requests, waits up to `drainTimeoutMs` for calls in flight, then closes the listener and
   * the stdio connection. The manager (and so the upstream servers) stays the caller's to close.
   */
  close(): Promise<void> {
    this.#closed ??= this.#close();
    return this.#closed;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #close(): Promise<void> {
    this.#draining = true;
    this.#offToolsChanged();
    if (this.#inFlight > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.config.drainTimeoutMs);
        timer.unref();
        this.#idle = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    // Calls still waiting for a client's answer between rounds are cancelled: that answer cannot come now.
    this.#relay?.close();
    this.#flows.close();
    const http = this.#http;
    await Promise.allSettled([
      http === undefined
        ? undefined
        : (async () => {
            await http.handler.close();
            await new Promise<void>((resolve) => {
              http.server.close(() => resolve());
              http.server.closeAllConnections();
            });
          })(),
      this.#stdio?.close(),
      this.#console?.close(),
      this.#throttle?.close(),
    ]);
  }

  /** The operator console (`gateway.console`), served from this listener's path or a listener of its own. */
  async #mountConsole(
    listener: Pick<
      Parameters<typeof mountConsole>[0],
      'door' | 'doorOptions' | 'host' | 'gatewayUrl' | 'tls'
    >,
  ): Promise<ConsoleMount | undefined> {
    const config = this.config.console;
    if (config === undefined || this.#feed === undefined) return undefined;
    followFleet(this.#feed, config.auditStream, this.#options.store);
    this.#console = await mountConsole({
      ...listener,
      deps: {
        config,
        gateway: this.config,
        manager: this.#manager,
        policies: this.#policies,
        feed: this.#feed,
        audit: this.#audit as AuditSink,
        methods: configuredMethods(this.config),
        shorthand: shorthandMethod(this.config),
        logger: this.#logger,
        sharedPolicy: this.#options.sharedPolicy,
        publisher: this.#options.policyPublisher,
        store: this.#options.store,
        fleet: this.#options.store !== undefined,
      },
    }).catch((err: unknown) => {
      this.#feed?.close();
      throw err;
    });
    return this.#console;
  }

  #principal(authInfo: AuthInfo | undefined): Principal {
    return principalOf(authInfo) ?? { subject: 'anonymous', groups: [], scopes: [], via: 'none' };
  }

  #serverFor(principal: Principal, flow: FlowScope, token?: string): Server {
    return createGatewayServer({
      ...this.#servingOptions(principal, flow, token),
      serverInfo: this.#serverInfo,
    });
  }

  /** The HTTP caller's `tools/call`, as its SDK server instance would run it (for the endpoint's direct leg). */
  #toolCallFor(authInfo: AuthInfo | undefined): GatewayToolCall {
    const principal = this.#principal(authInfo);
    const flow = this.#flows.scope(tupleKey(principal.via, principal.subject));
    return toolCaller(this.#servingOptions(principal, flow, authInfo?.token));
  }

  #servingOptions(principal: Principal, flow: FlowScope, token: string | undefined) {
    const capabilities = this.#policies.capabilitiesFor(principal);
    let view = this.#views.get(capabilities);
    if (view === undefined) {
      view = this.#manager.withCapabilities(capabilities, {
        agent: 'gateway',
        // `ask` rules ask the caller (an elicitation to its client); without a relay there is no one to ask.
        ...(this.#relay === undefined ? {} : { approver: this.#relay.approver }),
        ...(this.#audit === undefined ? {} : { audit: this.#audit }),
      });
      this.#views.set(capabilities, view);
    }
    return {
      manager: this.#manager,
      view,
      principal,
      naming: this.config.naming,
      observer: this.metrics,
      relay: this.#relay,
      onRenamed: (tool) => {
        if (this.#renamed.has(tool.name)) return;
        this.#renamed.add(tool.name);
        this.#logger.warn(
          `Server '${tool.server}' lists a tool named '${tool.tool}', which has the shape of an exposed name; the gateway lists it as '${tool.name}' so that it cannot pass for another server's tool.`,
          { server: tool.server },
        );
      },
      track: (work) => this.#track(work),
      // Issue 41: upstream servers that take the caller's identity exchange its verified bearer from here.
      flow: takesCallerIdentity(this.#manager)
        ? asCaller(flow, { principal, token, view, audit: this.#audit })
        : flow,
    } satisfies Omit<GatewayServerOptions, 'serverInfo'>;
  }

  async #track<T>(work: Promise<T>): Promise<T> {
    this.#begin();
    try {
      return await work;
    } finally {
      this.#end();
    }
  }

  #begin(): void {
    this.#inFlight++;
  }

  #end(): void {
    this.#inFlight--;
    if (this.#inFlight === 0) this.#idle?.();
  }

  #bearerGate(resourceUrl: URL) {
    const auth = this.config.auth;
    if (auth === undefined) return undefined;
    const verifier = createPrincipalVerifier({
      apiKeys: auth.apiKeys,
      jwt: auth.jwt,
      resourceUrl,
      fetch: this.#fetch,
    });
    return requireBearerAuth({
      verifier,
      expectedResource: resourceUrl,
      ...(auth.jwt?.requiredScopes === undefined ? {} : { requiredScopes: auth.jwt.requiredScopes }),
      ...(auth.jwt === undefined
        ? {}
        : { resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(resourceUrl) }),
    });
  }

  /** `gateway.auth.failedAttempts`, counted in the fleet's store too when there is one. */
  #authThrottle(): AuthThrottle | undefined {
    const limits = this.config.auth?.failedAttempts;
    if (limits === undefined || limits === false) return undefined;
    return new AuthThrottle({
      limits,
      store: this.#options.store,
      onBlocked: (address, failures) =>
        this.#logger.warn(
          `gateway: ${failures} credentials refused from ${address} within ${limits.windowMs} ms; every credential from it is refused unread for ${limits.blockMs} ms (gateway.auth.failedAttempts)`,
        ),
    });
  }

  /** RFC 9728 protected resource metadata, so a client that gets a 401 can find the authorization server. */
  #resourceMetadata(resourceUrl: URL): { path: string; document: Record<string, unknown> } | undefined {
    const jwt = this.config.auth?.jwt;
    if (jwt === undefined) return undefined;
    return {
      path: new URL(getOAuthProtectedResourceMetadataUrl(resourceUrl)).pathname,
      document: {
        resource: resourceUrl.href,
        authorization_servers: [jwt.issuer],
        bearer_methods_supported: ['header'],
        ...(jwt.requiredScopes === undefined ? {} : { scopes_supported: jwt.requiredScopes }),
        resource_name: this.#serverInfo.name,
      },
    };
  }

  /** Ready when not draining, every server has finished connecting, and at least one is up. */
  #readiness(): Response {
    const health = this.#manager.health();
    const servers = Object.fromEntries(Object.entries(health).map(([name, h]) => [name, h.state]));
    const states = Object.values(servers);
    const ready =
      !this.#draining && states.some((s) => s === 'ready') && !states.some((s) => s === 'connecting');
    return Response.json({ ready, draining: this.#draining, servers }, { status: ready ? 200 : 503 });
  }
}

/** The server's certificate, key and client CA, from PEM text or files. */
async function readTls(tls: GatewayTlsConfig): Promise<HttpsServerOptions> {
  const read = async (text: string | undefined, file: string | undefined, field: string) => {
    if (text !== undefined) return text;
    try {
      return await readFile(file as string, 'utf8');
    } catch (err) {
      throw new ConfigError(`Cannot read gateway.http.tls.${field} '${file}': ${(err as Error).message}`, {
        issues: [{ path: `gateway.http.tls.${field}`, message: 'cannot be read' }],
      });
    }
  };
  const mode = tls.clientCertificates;
  return {
    cert: await read(tls.cert, tls.certFile, 'certFile'),
    key: await read(tls.key, tls.keyFile, 'keyFile'),
    ...(mode === 'none'
      ? {}
      : {
          ca: await read(tls.clientCa, tls.clientCaFile, 'clientCaFile'),
          requestCert: true,
          rejectUnauthorized: mode === 'required',
        }),
  };
}

function text(status: number, body: string): Response {
  return new Response(body, { status, headers: { 'content-type': 'text/plain; charset=utf-8' } });
}
