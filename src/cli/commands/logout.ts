/**
 * `interlock logout [server...]` (issue 9): revokes the stored tokens at the authorization server's revocation
 * endpoint (RFC 7009) when its stored metadata names one, then forgets everything stored for the server. A failed
 * or impossible revocation is a warning: the local state is removed all the same, also without network access.
 */

import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type SignOutResult, signOut } from '../../auth/sign-in-state.js';
import { FileTokenStore } from '../../auth/token-store.js';
import {
  createHttpClient,
  type HttpClient,
  httpOptionsFromConfig,
  serverHttpOverrides,
} from '../../interop/http.js';
import { InterruptedError } from '../exit.js';
import { type CommandContext, Project, tokensFile } from '../project.js';
import { type AuthServerConfig, authServers } from './auth-servers.js';

const TOKEN_NAMES = { refresh_token: 'refresh token', access_token: 'access token' } as const;

export async function logoutCommand(ctx: CommandContext, names: readonly string[]): Promise<number> {
  const project = await Project.open(ctx);
  // The project's HTTP stack, as the manager has it: its SSRF guard, proxy and certificates apply to revocation
  // requests too, and a server's own `tls` / `proxy` to the requests made for it, as at sign-in.
  const { config } = project;
  let http: HttpClient | undefined;
  const fetchFor =
    (client: HttpClient, server: AuthServerConfig): FetchLike =>
    async (url, init) =>
      client.fetchFor(await serverHttpOverrides(server))(url, init);
  const { printer } = ctx;
  try {
    const client = createHttpClient({
      network: config.network,
      http: await httpOptionsFromConfig(config.http),
    });
    http = client;
    const servers = authServers(project.config, names, 'logout');
    const file = tokensFile(project.config);
    const store = new FileTokenStore(file);
    const results = await Promise.all(
      servers.map(async (server): Promise<SignOutResult & { name: string }> => {
        const { clientId, clientSecret, tokenEndpointAuthMethod, privateKey, signingAlgorithm } = server.auth;
        const result = await signOut(store, server.url, {
          clientId,
          clientSecret,
          tokenEndpointAuthMethod,
          privateKey,
          signingAlgorithm,
          clientMetadataUrl: server.auth.clientMetadataUrl,
          fetch: fetchFor(client, server),
          signal: ctx.io.signal,
        });
        return { name: server.name, ...result };
      }),
    );
    // Ctrl-C cut the revocations short; what was stored is removed all the same.
    if (ctx.io.signal?.aborted === true) throw new InterruptedError();
    if (printer.json) {
      printer.data({
        file,
        servers: results.map((r) => ({
          name: r.name,
          removed: r.removed,
          revocationEndpoint: r.endpoint ?? null,
          hadTokens: r.hadTokens,
          revoked: r.revoked,
          failed: r.failed,
        })),
      });
      return 0;
    }
    if (results.length === 0) {
      printer.line(`No server in ${project.config.file} has an 'auth' section: nothing to sign out of.`);
    }
    for (const r of results) {
      for (const f of r.failed) {
        printer.warn(
          `could not revoke the ${TOKEN_NAMES[f.token]} of ${r.name} at ${r.endpoint} (${f.reason})`,
        );
      }
      printer.line(describe(r));
    }
    return 0;
  } finally {
    await http?.close();
    await project.close();
  }
}

function describe(r: SignOutResult & { name: string }): string {
  if (!r.removed) return `not signed in to ${r.name}: nothing stored`;
  if (!r.hadTokens)
    return `not signed in to ${r.name}: removed its stored OAuth state (registration, discovery)`;
  const revoked =
    r.revoked.length === 0
      ? undefined
      : `revoked the ${r.revoked.map((t) => TOKEN_NAMES[t]).join(' and ')} at ${r.endpoint}`;
  const note =
    r.endpoint === undefined
      ? ' (the authorization server offers no revocation endpoint: the tokens stay valid until they expire)'
      : r.failed.length > 0
        ? ' (see the warnings: what was not revoked stays valid until it expires)'
        : '';
  return `signed out of ${r.name}: ${[revoked, 'removed the stored sign-in'].filter((p) => p !== undefined).join(', ')}${note}`;
}
