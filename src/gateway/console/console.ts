/**
 * The gateway's operator console (issue 41): server-rendered pages behind the gateway's own authentication.
 * An operator (a principal `gateway.operators` matches) signs in once with a gateway credential and gets a
 * server-side session; every request that changes something is a POST with the session's CSRF token and an
 * Origin of the console's own; every page carries a strict Content-Security-Policy. On a loopback gateway without
 * authentication the console asks nobody to sign in, exactly as `/metrics` does.
 */
import type { AuthMethod, GatewayConfig } from '../../config/gateway.js';
import type { GatewayConsoleConfig } from '../../config/gateway-console.js';
import { ConfigError } from '../../errors.js';
import type { Logger } from '../../interop/logger.js';
import type { MCPClientManager } from '../../interop/manager.js';
import { resourceFor } from '../../security/pattern.js';
import type { AuditRecord, AuditSink } from '../../security/types.js';
import type { SharedPolicy } from '../../state/shared-policy.js';
import { type StateStore, StateUnavailableError } from '../../state/types.js';
import { forwardedHeaders } from '../auth-throttle.js';
import type { PrincipalPolicies } from '../bindings.js';
import { type FrontDoor, type IncomingRequest, LOOPBACK_HOSTS } from '../front-door.js';
import { type Principal, principalMatches, principalOf } from '../principals.js';
import { consoleAssets } from './assets.js';
import { bindingViews, principalFromQuery, quotaViews, toolDecisions } from './data.js';
import { type AuditFeed, type FeedFilter, matchesFilter } from './feed.js';
import { fleetQuotaViews } from './fleet-quota.js';
import { formOf, plain, redirect, SECURITY_HEADERS, sameOrigin } from './http.js';
import { type PageContext, SignIn } from './layout.js';
import {
  BlockedPanel,
  DecisionRow,
  LivePanel,
  type Notice,
  PolicyPanel,
  QuotaPanel,
  ServersPanel,
  ToolsPanel,
} from './panels.js';
import { type ConsolePublisher, policyChanges, publishFromForm } from './publish.js';
import { PublishSection } from './publish-panel.js';
import {
  type ConsoleSession,
  ConsoleSessions,
  type ConsoleSessionTable,
  cookieName,
  cookieOf,
  csrfMatches,
  FleetConsoleSessions,
} from './sessions.js';

/** What the console reads and acts on: the gateway's parts. */
export interface ConsoleDeps {
  config: GatewayConsoleConfig;
  gateway: GatewayConfig;
  manager: MCPClientManager;
  policies: PrincipalPolicies;
  feed: AuditFeed;
  /** Where console actions are audited (the gateway's sink, through the feed). */
  audit: AuditSink;
  /** The ways callers authenticate (the tools panel's choices), and the method shorthand names stand for. */
  methods: readonly AuthMethod[];
  shorthand: AuthMethod | undefined;
  logger: Logger;
  sharedPolicy?: SharedPolicy | undefined;
  /** Publishes the project file's policy to the shared one (`interlock serve` passes it). */
  publisher?: ConsolePublisher | undefined;
  /** The fleet's store: the quota panel reads the fleet's counters there. */
  store?: StateStore | undefined;
  /** Whether the gateway has the fleet's store (its quota counters are then the fleet's). */
  fleet: boolean;
}

/** A request as the console sees it, after the gateway's front door screened its Host and Origin. */
interface ConsoleRequest {
  request: Request;
  incoming: IncomingRequest & { socket: unknown };
  url: URL;
  /** The path below the console's mount point (`/` for the mount point itself). */
  path: string;
  /** Where it comes from, for the audit (behind trusted proxies, the caller X-Forwarded-For names). */
  from: string;
}

/** The operator console: routes requests below its mount point. */
export class OperatorConsole {
  readonly #deps: ConsoleDeps;
  /** The sessions, and what the last action of each said (shown once on the panel it redirects to). */
  readonly #sessions: ConsoleSessionTable;
  readonly #streams = new Set<() => void>();

  constructor(deps: ConsoleDeps) {
    this.#deps = deps;
    const options = { ttlMs: deps.config.sessionTtlMs, max: deps.config.maxSessions };
    // With the fleet's store, every replica serves every session: no stickiness needed behind a balancer.
    this.#sessions =
      deps.store === undefined ? new ConsoleSessions(options) : new FleetConsoleSessions(deps.store, options);
  }

  /**
   * Refuses a console that would be reachable off this machine without sign-in: on a non-loopback address the
   * gateway must authenticate callers and name its operators. Where a gateway authenticates, operators are needed
   * anyway (nobody could sign in otherwise).
   */
  static checkExposure(host: string, door: FrontDoor, gateway: GatewayConfig): void {
    const where = `gateway.console on '${host}'`;
    if (!door.authenticates && !LOOPBACK_HOSTS.has(host)) {
      throw new ConfigError(
        `${where} is not on a loopback address and the gateway authenticates nobody: anyone who can reach it could approve tools. Add gateway.auth and gateway.operators, or serve the console on 127.0.0.1 (gateway.console.listen.host).`,
        {
          issues: [
            { path: 'gateway.console', message: 'needs gateway.auth (or client certificates) off loopback' },
          ],
        },
      );
    }
    if (door.authenticates && gateway.operators === undefined) {
      throw new ConfigError(
        `${where} needs gateway.operators: only an operator may sign in to the console. Name them, e.g. operators: { apiKey: { subjects: [ops] } }.`,
        {
          issues: [{ path: 'gateway.operators', message: 'required with gateway.console and gateway.auth' }],
        },
      );
    }
  }

  /** Answers one request below the console's mount point `base` (`''` on a listener of its own). */
  async handle(
    request: Request,
    incoming: IncomingRequest & { socket: unknown },
    door: FrontDoor,
    base: string,
  ): Promise<Response> {
    try {
      return await this.#handle(request, incoming, door, base);
    } catch (err) {
      // The fleet's sessions are in its store: without it nobody is signed in or out, and nothing is let through.
      if (!(err instanceof StateUnavailableError)) throw err;
      this.#deps.logger.error(`The console could not reach the fleet's store: ${err.message}`);
      return plain(
        503,
        "The fleet's store is unavailable, and console sessions are kept there. Try again.\n",
      );
    }
  }

  async #handle(
    request: Request,
    incoming: IncomingRequest & { socket: unknown },
    door: FrontDoor,
    base: string,
  ): Promise<Response> {
    const url = new URL(request.url);
    const path = url.pathname.slice(base.length) || '/';
    const req: ConsoleRequest = {
      request,
      incoming,
      url,
      path,
      from: door.addressOf(incoming) || 'an unknown address',
    };
    if (path.startsWith('/assets/')) {
      const asset = request.method === 'GET' ? consoleAssets().get(path.slice('/assets/'.length)) : undefined;
      if (asset === undefined) return plain(404, 'Not found.\n');
      return new Response(asset.body, {
        headers: {
          ...SECURITY_HEADERS,
          'content-type': `${asset.type}; charset=utf-8`,
          'cache-control': 'no-cache',
        },
      });
    }
    const open = !door.authenticates;
    const secure = url.protocol === 'https:';
    if (request.method === 'POST' && !sameOrigin(request, url)) {
      return plain(403, 'Forbidden: a console form must come from the console itself (Origin).\n');
    }
    if (path === '/signin' && !open) {
      if (request.method === 'GET')
        return this.#page(
          SignIn({ ctx: this.#ctx(base, undefined, false), mtls: door.certificatesAccepted }),
        );
      if (request.method === 'POST') return this.#signIn(req, door, base, secure);
      return plain(405, 'Method not allowed.\n');
    }
    let session = await this.#sessions.get(cookieOf(request, cookieName(secure)));
    let setCookie: string | undefined;
    if (session === undefined) {
      if (!open) {
        if (request.method !== 'GET' || path.endsWith('/events')) return plain(401, 'Sign in first.\n');
        return redirect(`${base}/signin`);
      }
      // No sign-in on a loopback gateway without auth: a session still carries the CSRF token of its forms.
      session = await this.#sessions.create({ subject: 'local', groups: [], scopes: [], via: 'none' });
      setCookie = this.#cookie(session, base, secure);
    }
    const ctx = this.#ctx(base, session, open);
    const response =
      request.method === 'POST'
        ? await this.#act(req, session, ctx)
        : request.method === 'GET'
          ? await this.#view(req, session, ctx)
          : plain(405, 'Method not allowed.\n');
    if (setCookie !== undefined) response.headers.append('set-cookie', setCookie);
    return response;
  }

  /** Ends every live view and session. */
  close(): void {
    for (const end of this.#streams) end();
    this.#streams.clear();
    this.#sessions.clear();
    this.#deps.feed.close();
  }

  async #signIn(req: ConsoleRequest, door: FrontDoor, base: string, secure: boolean): Promise<Response> {
    const form = await formOf(req.request);
    const credential = typeof form.credential === 'string' ? form.credential.trim() : '';
    // The same checks as an MCP request: the credential as a bearer token (or the client certificate alone), and
    // the forwarded-for headers (a refused sign-in counts against the caller's address as a refused call does).
    const bearer = credential === '' ? [] : ['Authorization', `Bearer ${credential}`];
    const rawHeaders = [...bearer, ...forwardedHeaders(req.incoming.rawHeaders)];
    const probe = new Request(req.url, { headers: bearer.length === 0 ? {} : { authorization: bearer[1]! } });
    const verdict = await door.authenticate(probe, { rawHeaders, socket: req.incoming.socket });
    const principal = verdict instanceof Response ? undefined : principalOf(verdict);
    const ctx = this.#ctx(base, undefined, false);
    const { from } = req;
    if (principal === undefined) {
      // 429: the address had too many credentials refused (gateway.auth.failedAttempts); this one was not read.
      const wait =
        verdict instanceof Response && verdict.status === 429 ? verdict.headers.get('retry-after') : null;
      this.#record('sign-in', 'console', {
        allowed: false,
        reason: `refused: ${wait === null ? 'the credential was not accepted' : 'too many refused credentials'}, from ${from}`,
      });
      const error =
        wait === null
          ? 'That credential was not accepted.'
          : `Too many refused sign-ins from this address: try again in ${wait} s.`;
      return this.#page(SignIn({ ctx, error, mtls: door.certificatesAccepted }), wait === null ? 401 : 429);
    }
    const operators = this.#deps.gateway.operators;
    if (operators === undefined || !principalMatches(operators, principal, this.#deps.shorthand)) {
      this.#record('sign-in', 'console', {
        allowed: false,
        principal,
        reason: `refused: not an operator (gateway.operators), from ${from}`,
      });
      return this.#page(
        SignIn({ ctx, error: 'This credential is not an operator’s.', mtls: door.certificatesAccepted }),
        403,
      );
    }
    const session = await this.#sessions.create(principal);
    this.#record('sign-in', 'console', { allowed: true, principal, reason: `signed in from ${from}` });
    const response = redirect(`${base}/servers`);
    response.headers.append('set-cookie', this.#cookie(session, base, secure));
    return response;
  }

  /** A POST: the session's CSRF token first, then the action, then back to its panel. */
  async #act(req: ConsoleRequest, session: ConsoleSession, ctx: PageContext): Promise<Response> {
    const form = await formOf(req.request);
    if (!csrfMatches(session, form._csrf)) {
      return plain(403, 'Forbidden: the form has no valid CSRF token; reload the page and try again.\n');
    }
    const { from } = req;
    const principal = session.principal;
    switch (req.path) {
      case '/signout': {
        await this.#sessions.delete(session.id);
        this.#record('sign-out', 'console', { allowed: true, principal, reason: `signed out from ${from}` });
        const response = redirect(`${ctx.base}${ctx.open ? '/servers' : '/signin'}`);
        response.headers.append(
          'set-cookie',
          this.#cookie(undefined, ctx.base, req.url.protocol === 'https:'),
        );
        return response;
      }
      case '/blocked/approve': {
        const name = String(form.name ?? '');
        const hash = String(form.hash ?? '');
        const blocked = this.#deps.manager.blockedTools.find((b) => b.name === name);
        // The hash the operator reviewed: a definition that changed again since has another hash and stays blocked.
        const approved = /^[0-9a-f]{12,64}$/.test(hash) && this.#deps.manager.approveToolChange(name, hash);
        const resource = blocked === undefined ? name : resourceFor.tool(blocked.server, blocked.tool);
        this.#record('approve-tool-change', resource, {
          allowed: approved,
          principal,
          reason: `${approved ? 'approved' : 'not approved (no such pending change)'} definition ${hash.slice(0, 12)} from ${from}`,
        });
        await this.#sessions.say(
          session.id,
          approved
            ? { done: `Approved ${name} (${hash.slice(0, 12)}); calls go through again.` }
            : {
                error: `${name} was not approved: its definition is no longer the one reviewed (${hash.slice(0, 12)}), or it is not blocked. Review it again.`,
              },
        );
        return redirect(`${ctx.base}/blocked`);
      }
      case '/policy/revoke': {
        const shared = this.#deps.sharedPolicy;
        const rule = String(form.rule ?? '');
        if (shared === undefined) return plain(404, 'This gateway shares no policy.\n');
        try {
          const version = await shared.revoke(rule);
          await this.#sessions.say(session.id, {
            done: `Revoked rule ${rule}: the shared policy is at version ${version}.`,
          });
          this.#record('revoke-rule', `policy-rule:${rule}`, {
            allowed: true,
            principal,
            reason: `revoked from ${from}, version ${version}`,
          });
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          await this.#sessions.say(session.id, { error: `Rule ${rule} was not revoked: ${message}` });
          this.#record('revoke-rule', `policy-rule:${rule}`, {
            allowed: false,
            principal,
            reason: `failed from ${from}: ${message}`,
          });
        }
        return redirect(`${ctx.base}/policy`);
      }
      case '/policy/publish':
        return this.#publish(form, session, ctx, from);
      default:
        return plain(404, 'Not found.\n');
    }
  }

  /**
   * Publishes the project file's policy when it is still the one shown (the form's hash), through the publisher's
   * checks (the policy tests; with `requireReview`, the review hash). A refusal is shown with its reason.
   */
  async #publish(
    form: Record<string, unknown>,
    session: ConsoleSession,
    ctx: PageContext,
    from: string,
  ): Promise<Response> {
    const { sharedPolicy: shared, publisher } = this.#deps;
    if (shared === undefined || publisher === undefined)
      return plain(404, 'This gateway publishes no policy.\n');
    const outcome = await publishFromForm(publisher, form);
    await this.#sessions.say(session.id, outcome.notice);
    this.#record('publish-policy', `policy:${outcome.hash.slice(0, 12)}`, {
      allowed: outcome.allowed,
      principal: session.principal,
      reason: `${outcome.reason} from ${from}`,
    });
    return redirect(`${ctx.base}/policy`);
  }

  async #view(req: ConsoleRequest, session: ConsoleSession, ctx: PageContext): Promise<Response> {
    const { manager } = this.#deps;
    const notice: Notice = await this.#sessions.notice(session.id);
    switch (req.path) {
      case '/':
        return redirect(`${ctx.base}/servers`);
      case '/servers':
        return this.#page(
          ServersPanel({ ctx, health: manager.health(), blocked: manager.blockedTools.length }),
        );
      case '/tools':
        return this.#page(this.#tools(req, ctx));
      case '/live':
        return this.#page(
          LivePanel({
            ctx,
            filter: filterOf(req.url),
            entries: this.#deps.feed.recent(filterOf(req.url)).slice(0, 200),
            eventsUrl: `${ctx.base}/live/events${req.url.search}`,
          }),
        );
      case '/live/events':
        return this.#events(filterOf(req.url));
      case '/blocked':
        return this.#page(BlockedPanel({ ctx, blocked: manager.blockedTools, notice }));
      case '/policy': {
        const { sharedPolicy: shared, publisher } = this.#deps;
        const preview = shared === undefined ? undefined : await publisher?.preview();
        return this.#page(
          PolicyPanel({
            ctx,
            notice,
            shared:
              shared === undefined
                ? undefined
                : { version: shared.version, fenced: shared.fenced, policy: shared.policy },
            publish:
              preview === undefined
                ? undefined
                : PublishSection({ ctx, preview, changes: policyChanges(shared?.policy, preview.policy) }),
          }),
        );
      }
      case '/quota': {
        const { store, policies, feed } = this.#deps;
        const asked = req.url.searchParams.get('principal')?.trim().slice(0, 256) || undefined;
        const fleetQuotas =
          store === undefined
            ? undefined
            : await fleetQuotaViews(
                store,
                { bindings: this.#deps.gateway.principals, policies, feed },
                asked,
              );
        return this.#page(
          QuotaPanel({ ctx, quotas: quotaViews(policies), fleet: this.#deps.fleet, fleetQuotas, asked }),
        );
      }
      default:
        return plain(404, 'Not found.\n');
    }
  }

  #tools(req: ConsoleRequest, ctx: PageContext) {
    const { deps } = { deps: this.#deps };
    const methods = deps.methods.filter((m) => m !== 'stdio' || deps.methods.length === 1);
    const asked = req.url.searchParams.get('method') ?? '';
    const method = (methods as readonly string[]).includes(asked)
      ? (asked as AuthMethod)
      : (methods[0] ?? 'stdio');
    const subject = (req.url.searchParams.get('subject') ?? '').trim().slice(0, 256);
    const groups = (req.url.searchParams.get('groups') ?? '').slice(0, 1024);
    const principal: Principal | undefined =
      subject === '' ? undefined : principalFromQuery(method, subject, groups);
    const bindings = deps.gateway.principals;
    return ToolsPanel({
      ctx,
      methods,
      bindings: bindingViews(bindings),
      query: { method, subject, groups },
      matched:
        principal === undefined || bindings === undefined ? undefined : deps.policies.matching(principal),
      tools: principal === undefined ? undefined : toolDecisions(deps.manager, deps.policies, principal),
    });
  }

  /** The live view's stream: each new decision that passes the filter, as a table row (server-sent events). */
  #events(filter: FeedFilter): Response {
    const encoder = new TextEncoder();
    let end: (() => void) | undefined;
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        const send = (text: string) => {
          try {
            controller.enqueue(encoder.encode(text));
          } catch {
            end?.();
          }
        };
        const unsubscribe = this.#deps.feed.subscribe((entry) => {
          if (!matchesFilter(entry.record, filter)) return;
          void Promise.resolve(DecisionRow({ entry }).toString()).then((html) => {
            const data = String(html)
              .split('\n')
              .map((line) => `data: ${line}`)
              .join('\n');
            send(`event: decision\nid: ${entry.seq}\n${data}\n\n`);
          });
        });
        // A comment now and then keeps proxies from closing an idle stream.
        const heartbeat = setInterval(() => send(': keep-alive\n\n'), 15_000);
        heartbeat.unref();
        end = () => {
          unsubscribe();
          clearInterval(heartbeat);
          this.#streams.delete(stop);
        };
        const stop = () => {
          end?.();
          try {
            controller.close();
          } catch {
            // Already closed by the browser.
          }
        };
        this.#streams.add(stop);
        send(': live\n\n');
      },
      cancel: () => end?.(),
    });
    return new Response(body, {
      headers: {
        ...SECURITY_HEADERS,
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
      },
    });
  }

  #ctx(base: string, session: ConsoleSession | undefined, open: boolean): PageContext {
    return { base, operator: session?.principal.subject, csrf: session?.csrf, open };
  }

  async #page(element: { toString(): unknown }, status = 200): Promise<Response> {
    const html = `<!doctype html>${String(await element.toString())}`;
    return new Response(html, {
      status,
      headers: {
        ...SECURITY_HEADERS,
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
      },
    });
  }

  /** The session cookie (`undefined`: the cookie that clears it). `__Host-` on HTTPS, where a browser allows it. */
  #cookie(session: ConsoleSession | undefined, base: string, secure: boolean): string {
    const parts = [
      `${cookieName(secure)}=${session?.id ?? ''}`,
      `Path=${secure ? '/' : base || '/'}`,
      'HttpOnly',
      'SameSite=Strict',
      `Max-Age=${session === undefined ? 0 : Math.floor(this.#deps.config.sessionTtlMs / 1000)}`,
    ];
    if (secure) parts.push('Secure');
    return parts.join('; ');
  }

  /** Audits a console action: who, what, from where (the record's `reason`). */
  #record(
    action: string,
    resource: string,
    what: { allowed: boolean; principal?: Principal; reason: string },
  ): void {
    const record: AuditRecord = {
      time: new Date().toISOString(),
      agent: 'console',
      principal: what.principal?.subject,
      resource,
      action,
      effect: what.allowed ? 'allow' : 'deny',
      allowed: what.allowed,
      reason: what.reason,
      argumentKeys: [],
    };
    const failed = (err: unknown) =>
      this.#deps.logger.error(`The console could not audit '${action}': ${String(err)}`);
    try {
      void Promise.resolve(this.#deps.audit.write(record)).catch(failed);
    } catch (err) {
      failed(err);
    }
    this.#deps.logger.info(`console ${action} ${resource}: ${what.reason}`, {
      ...(what.principal === undefined ? {} : { principal: what.principal.subject }),
    });
  }
}

function filterOf(url: URL): FeedFilter {
  const value = (name: string) => url.searchParams.get(name)?.trim().slice(0, 256) || undefined;
  return { principal: value('principal'), tool: value('tool'), rule: value('rule') };
}
