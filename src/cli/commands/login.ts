/**
 * `interlock login [server...]` (issue 9): signs in to OAuth-protected servers by connecting them, which runs
 * discovery, registration, PKCE and the browser sign-in (or the client credentials grant), and disconnecting
 * again; the tokens stay in the project's token file. `--status` shows what is stored there without contacting
 * anything. Never prints a token, secret or authorization code.
 */

import { tokenStoreKey } from '../../auth/provider.js';
import { forgetTokens, revokeTokens, signInStatus } from '../../auth/sign-in-state.js';
import type { TokenStore } from '../../auth/token-store.js';
import { type Cell, oneLine, renderTable } from '../format.js';
import { type CommandContext, Project, tokensFile } from '../project.js';
import {
  type AuthServerConfig,
  authServers,
  createRevoker,
  describeExpiry,
  TOKEN_NAMES,
} from './auth-servers.js';

export interface LoginOptions {
  /** `--force`: revoke and forget stored tokens first, and sign in anew. */
  force?: boolean | undefined;
  /** `--status`: show stored sign-ins without contacting anything. */
  status?: boolean | undefined;
}

/**
 * Longest time a browser sign-in may take: `login` waits this long for a server whose `connectTimeoutMs` is
 * shorter, since a person is typing a password.
 */
export const SIGN_IN_TIMEOUT_MS = 300_000;

export async function loginCommand(
  ctx: CommandContext,
  names: readonly string[],
  options: LoginOptions,
): Promise<number> {
  const project = await Project.open(ctx);
  try {
    if (options.status === true) return await status(ctx, project, names);
    return await login(ctx, project, names, options.force === true);
  } finally {
    await project.close();
  }
}

/**
 * `--force`: the stored tokens are revoked where the authorization server allows it (as `logout` does; a failure
 * is a warning), then forgotten; the client registration is kept, so the new sign-in uses the same client.
 */
async function revokeAndForget(
  ctx: CommandContext,
  project: Project,
  store: TokenStore,
  servers: readonly AuthServerConfig[],
): Promise<void> {
  await using revoker = await createRevoker(project.config, ctx.io.signal);
  await Promise.all(
    servers.map(async (server) => {
      const state = await store.load(tokenStoreKey(server.url));
      if (state?.tokens === undefined) return;
      const result = await revokeTokens(state, revoker.optionsFor(server));
      for (const f of result.failed) {
        ctx.printer.warn(
          `could not revoke the old ${TOKEN_NAMES[f.token]} of ${server.name} at ${result.endpoint} (${f.reason})`,
        );
      }
      await forgetTokens(store, server.url);
    }),
  );
}

async function login(
  ctx: CommandContext,
  project: Project,
  names: readonly string[],
  force: boolean,
): Promise<number> {
  const { printer } = ctx;
  const servers = authServers(project.config, names, 'login');
  if (servers.length === 0) return nothingToDo(ctx, project, 'No enabled server', 'sign in to');
  const store = project.tokens;
  if (force) await revokeAndForget(ctx, project, store, servers);
  const before = new Map<string, string | undefined>();
  for (const server of servers) {
    // Kept in memory only, to tell a new sign-in from tokens that were still good.
    before.set(server.name, (await store.load(tokenStoreKey(server.url)))?.tokens?.access_token);
  }
  const configs = servers.map((s) =>
    s.auth.grant === 'authorization_code'
      ? { ...s, connectTimeoutMs: Math.max(s.connectTimeoutMs, SIGN_IN_TIMEOUT_MS) }
      : s,
  );
  await project.interruptible(project.manager.connectAll(configs));
  const rows = [];
  for (const server of servers) {
    const connection = project.manager.getConnection(server.name);
    if (connection?.state !== 'ready') {
      const error = connection?.error;
      rows.push({
        name: server.name,
        signedIn: false,
        error: {
          code: (error as { code?: string } | undefined)?.code ?? 'ERROR',
          message: error?.message ?? 'the server did not connect',
        },
      });
      continue;
    }
    const state = await store.load(tokenStoreKey(server.url));
    const now = signInStatus(state);
    rows.push({
      name: server.name,
      signedIn: now.signedIn,
      alreadySignedIn: now.signedIn && state?.tokens?.access_token === before.get(server.name),
      scope: now.scope ?? null,
      expiresAt: now.expiresAt === undefined ? null : new Date(now.expiresAt).toISOString(),
    });
  }
  await project.manager.disconnectAll();
  if (printer.json) {
    printer.data({ file: tokensFile(project.config), servers: rows });
  } else {
    for (const row of rows) {
      if (row.error !== undefined) {
        printer.lineErr(
          `${printer.style('red', 'error:', 'err')} could not sign in to ${row.name}: ${oneLine(row.error.message, 500)}`,
        );
        continue;
      }
      if (!row.signedIn) {
        printer.line(`connected to ${row.name} without signing in: it asked for no token`);
        continue;
      }
      const details = [
        row.scope === null ? undefined : `scopes: ${row.scope}`,
        row.expiresAt === null ? undefined : `expires ${describeExpiry(Date.parse(row.expiresAt))}`,
      ].filter((d) => d !== undefined);
      const what = row.alreadySignedIn ? 'already signed in to' : 'signed in to';
      printer.line(
        `${what} ${printer.style('bold', row.name)}${details.length === 0 ? '' : ` (${details.join('; ')})`}`,
      );
    }
  }
  return rows.some((r) => r.error !== undefined) ? 1 : 0;
}

/** `login --status`: what the token file holds for each server with `auth`, read without contacting anything. */
async function status(ctx: CommandContext, project: Project, names: readonly string[]): Promise<number> {
  const { printer } = ctx;
  const servers = authServers(project.config, names, 'status');
  const file = tokensFile(project.config);
  if (servers.length === 0) return nothingToDo(ctx, project, 'No server', 'show');
  const store = project.tokens;
  const rows = await Promise.all(
    servers.map(async (server: AuthServerConfig) => {
      const s = signInStatus(await store.load(tokenStoreKey(server.url)));
      return {
        name: server.name,
        url: server.url,
        grant: server.auth.grant,
        enabled: server.enabled,
        signedIn: s.signedIn,
        scope: s.scope ?? null,
        expiresAt: s.expiresAt === undefined ? null : new Date(s.expiresAt).toISOString(),
        expired: s.expired,
        refreshable: s.refreshable,
      };
    }),
  );
  if (printer.json) {
    printer.data({ file, servers: rows });
    return 0;
  }
  const table: Cell[][] = rows.map((r) => [
    r.enabled ? r.name : `${r.name} (disabled)`,
    r.grant,
    r.signedIn ? { text: 'yes', style: 'green' } : { text: 'no', style: 'dim' },
    r.scope ?? '-',
    r.expiresAt === null
      ? '-'
      : { text: describeExpiry(Date.parse(r.expiresAt)), style: r.expired ? 'yellow' : undefined },
    r.signedIn ? (r.refreshable ? 'yes' : 'no') : '-',
  ]);
  printer.line(renderTable(printer, ['SERVER', 'GRANT', 'SIGNED IN', 'SCOPE', 'EXPIRES', 'REFRESH'], table));
  printer.line();
  printer.line(`Token file: ${file}`);
  return 0;
}

function nothingToDo(ctx: CommandContext, project: Project, who: string, verb: string): number {
  if (ctx.printer.json) ctx.printer.data({ file: tokensFile(project.config), servers: [] });
  else
    ctx.printer.line(
      `${who} in ${project.config.file} has an 'auth' section: nothing to ${verb}. Add 'auth: { type: oauth }' to a remote server to sign in with OAuth.`,
    );
  return 0;
}
