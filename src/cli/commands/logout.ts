/**
 * `interlock logout [server...]` (issue 9): revokes the stored tokens at the authorization server's revocation
 * endpoint (RFC 7009) when its stored metadata names one, then forgets everything stored for the server. A failed
 * or impossible revocation is a warning: the local state is removed all the same, also without network access.
 */

import { type SignOutResult, signOut } from '../../auth/sign-in-state.js';
import { InterruptedError } from '../exit.js';
import { type CommandContext, Project, tokensFile } from '../project.js';
import { authServers, createRevoker, type Revoker, TOKEN_NAMES } from './auth-servers.js';

export async function logoutCommand(ctx: CommandContext, names: readonly string[]): Promise<number> {
  const project = await Project.open(ctx);
  const { printer } = ctx;
  let revoker: Revoker | undefined;
  try {
    revoker = await createRevoker(project.config, ctx.io.signal);
    const servers = authServers(project.config, names, 'logout');
    const file = tokensFile(project.config);
    const store = project.tokens;
    const active = revoker;
    const results = await Promise.all(
      servers.map(
        async (server): Promise<SignOutResult & { name: string }> => ({
          name: server.name,
          ...(await signOut(store, server.url, active.optionsFor(server))),
        }),
      ),
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
    await revoker?.close();
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
