/**
 * The caller's identity for upstream servers (issue 41): every call, read and prompt a gateway caller makes runs in
 * its caller context, which a server whose `auth` is `token_exchange` reads to exchange the caller's token for one
 * of its own (src/auth/token-exchange.ts). Only a JWT caller's bearer is ever offered for exchange (an API key is
 * the gateway's own secret, not an identity the authorization server knows). A refusal is audited here: the
 * decision trail shows the server, the tool, the principal and the reason code, and the upstream was not called.
 */
import { runAsCaller } from '../interop/caller-context.js';
import type { CapabilityView, MCPClientManager } from '../interop/manager.js';
import { resourceFor } from '../security/pattern.js';
import type { AuditSink } from '../security/types.js';
import type { FlowScope } from './flow-states.js';
import type { Principal } from './principals.js';

/** `flow`, with everything run in it made for `principal` (whose verified bearer is `token`). */
export function asCaller(
  flow: FlowScope,
  caller: {
    principal: Principal;
    token: string | undefined;
    view: CapabilityView;
    audit: AuditSink | undefined;
  },
): FlowScope {
  const { principal, view, audit } = caller;
  const context = { principal: principal.subject };
  const identity = {
    subject: principal.subject,
    via: principal.via,
    token: principal.via === 'jwt' ? caller.token : undefined,
    allowedTools: (server: string) =>
      view
        .visibleTools(context)
        .filter((tool) => tool.server === server)
        .map((tool) => tool.tool),
    refused: (event: { server: string; tool: string | undefined; reason: string; code: string }) => {
      if (audit === undefined) return;
      const tool = event.tool ?? '*';
      try {
        void Promise.resolve(
          audit.write({
            time: new Date().toISOString(),
            agent: 'gateway',
            principal: principal.subject,
            resource: resourceFor.tool(event.server, tool),
            action: 'execute',
            effect: 'deny',
            allowed: false,
            reason: `${event.code}: ${event.reason}`,
            server: event.server,
            tool,
            argumentKeys: [],
          }),
        ).catch(() => {});
      } catch {
        // A failing sink does not change the outcome: the call is refused either way.
      }
    },
  };
  return (work) => runAsCaller(identity, () => flow(work));
}

/**
 * Whether any of the manager's servers takes its caller's identity (`auth.type: token_exchange`): only then does
 * a gateway call run in a caller context, so a gateway without such a server pays nothing for it per call.
 */
export function takesCallerIdentity(manager: MCPClientManager): boolean {
  return manager.connections.some(({ config }) => 'auth' in config && config.auth?.type === 'token_exchange');
}
