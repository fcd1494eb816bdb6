/**
 * What a caller of the gateway can name, and the one upstream tool, prompt or resource each name stands for
 * (issue 38). Three rules hold here:
 *
 * - A call resolves through the same map its caller's list was built from, never through the manager's names:
 *   what a caller calls is exactly what was listed to it. With `naming: tool` a server's own tool name is
 *   listed only when no listed name can equal it; a name that starts with `mcp__` (the shape of every exposed
 *   name) is listed as its exposed name instead, with a warning to the operator, so a server cannot list a
 *   tool under another tool's exposed name.
 * - A name the caller may not see answers exactly as a name that does not exist. The gate still decides (and
 *   audits) the attempt, so the operator's log keeps the denial with its detail; the caller learns nothing.
 * - A resource URI that several servers the caller may read from offer (listed or by template) is ambiguous:
 *   it is left out of the list and a read is refused, rather than served by whichever server connected first.
 */
import { ProtocolError, ProtocolErrorCode, UriTemplate } from '@modelcontextprotocol/server';
import { InterlockError, RequestCancelledError } from '../errors.js';
import type { CapabilityView, MCPClientManager } from '../interop/manager.js';
import { resourceFor } from '../security/pattern.js';
import type { CheckContext } from '../security/types.js';
import type { ToolWrapper } from '../tools/tool-wrapper.js';

/** How tools are named downstream (`gateway.naming`). */
export type ToolNaming = 'exposed' | 'tool';

/** Every exposed name starts with this (src/tools/names.ts); an own name that does is never listed as itself. */
const EXPOSED_PREFIX = 'mcp__';

/**
 * The tools a caller's `tools/list` shows, by the name it shows them under. `onRenamed` hears of each tool whose
 * own name could not be listed because it has the shape of an exposed name.
 */
export function toolRoutes(
  visible: readonly ToolWrapper[],
  naming: ToolNaming,
  onRenamed?: (wrapper: ToolWrapper) => void,
): Map<string, ToolWrapper> {
  const routes = new Map<string, ToolWrapper>();
  if (naming === 'exposed') {
    for (const t of visible) routes.set(t.name, t);
    return routes;
  }
  const counts = new Map<string, number>();
  for (const t of visible) counts.set(t.tool, (counts.get(t.tool) ?? 0) + 1);
  for (const t of visible) {
    const reserved = t.tool.startsWith(EXPOSED_PREFIX);
    if (reserved) onRenamed?.(t);
    // Own names used here are unique among themselves and never start with `mcp__`; exposed names always do
    // and are unique too: no two listed names can be equal.
    routes.set(counts.get(t.tool) === 1 && !reserved ? t.tool : t.name, t);
  }
  return routes;
}

/** The answer to a name the caller cannot use: the same whether it is hidden from the caller or does not exist. */
export function unknownName(kind: 'tool' | 'prompt' | 'resource', name: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown ${kind}: ${name}`);
}

/** A signal that is already aborted: a decision recorded for a hidden name must never become a request. */
function refused(): AbortSignal {
  return AbortSignal.abort(
    new RequestCancelledError('A name hidden from the caller is decided and audited, never sent.'),
  );
}

/**
 * Records the gate's denial of a call to a tool the caller does not see (so the operator's audit has it), when
 * `name` is a tool at all, and resolves with each such tool and the code of its refusal (for the operator's
 * metrics); the caller's answer is {@link unknownName} either way. The call cannot be sent: the tool is hidden
 * because the caller's set cannot allow it (or its pin is broken), and its signal is aborted before it starts.
 */
export async function recordHiddenTool(
  manager: MCPClientManager,
  view: CapabilityView,
  visible: readonly ToolWrapper[],
  naming: ToolNaming,
  name: string,
  principal: string,
): Promise<{ tool: ToolWrapper; code: string }[]> {
  // The tools `name` could mean: the one with that exposed name, or (naming: tool) those with that own name.
  const hidden = manager.tools.filter(
    (t) => (t.name === name || (naming === 'tool' && t.tool === name)) && !visible.includes(t),
  );
  const out: { tool: ToolWrapper; code: string }[] = [];
  for (const tool of hidden) {
    const code = await view.callTool(tool.name, {}, { signal: refused(), principal }).then(
      () => 'INTERNAL',
      (err: unknown) => (err instanceof InterlockError ? err.code : 'INTERNAL'),
    );
    out.push({ tool, code });
  }
  return out;
}

/** The connected upstream servers, in connect order. */
export function upstream(manager: MCPClientManager) {
  return manager.connections
    .filter((connection) => connection.state === 'ready')
    .map((connection) => ({ name: connection.name, connection }));
}

/** The prompts a caller's `prompts/list` shows, by the name it shows them under (`mcp__{server}__{prompt}`). */
export function promptRoutes(
  manager: MCPClientManager,
  view: CapabilityView,
  context: CheckContext,
): Map<string, { server: string; prompt: string }> {
  const routes = new Map<string, { server: string; prompt: string }>();
  for (const { name, connection } of upstream(manager)) {
    for (const p of connection.prompts) {
      if (view.capabilities.couldAllow(resourceFor.prompt(name, p.name), 'get', context)) {
        routes.set(`mcp__${name}__${p.name}`, { server: name, prompt: p.name });
      }
    }
  }
  return routes;
}

/** Records the gate's denial of a prompt the caller does not see, when `name` is one (see recordHiddenTool). */
export async function recordHiddenPrompt(
  manager: MCPClientManager,
  view: CapabilityView,
  name: string,
  principal: string,
): Promise<void> {
  for (const { name: server, connection } of upstream(manager)) {
    const prompt = connection.prompts.find((p) => `mcp__${server}__${p.name}` === name);
    if (prompt === undefined) continue;
    await view.getPrompt(server, prompt.name, {}, { signal: refused(), principal }).catch(() => {});
    return;
  }
}

/** Which servers offer `uri`: those listing it, and those with a template it matches. */
function offering(manager: MCPClientManager, uri: string): string[] {
  return upstream(manager)
    .filter(
      ({ connection }) =>
        connection.resources.some((r) => r.uri === uri) ||
        connection.resourceTemplates.some((t) => templateMatches(t.uriTemplate, uri)),
    )
    .map(({ name }) => name);
}

/** Where a read of `uri` goes for this caller. */
export type ResourceRoute =
  | { kind: 'one'; server: string }
  | { kind: 'ambiguous'; servers: string[] }
  /** No server the caller may read from offers it; `hidden` lists servers that offer it to others. */
  | { kind: 'none'; hidden: string[] };

/**
 * The server a read of `uri` goes to: the one server the caller may read it from. Servers the caller may not
 * read it from do not count (they are hidden from it), and two or more that it may are ambiguous.
 */
export function resourceRoute(
  manager: MCPClientManager,
  view: CapabilityView,
  uri: string,
  context: CheckContext,
): ResourceRoute {
  const servers = offering(manager, uri);
  const readable = servers.filter((s) =>
    view.capabilities.couldAllow(resourceFor.resource(s, uri), 'read', context),
  );
  if (readable.length === 1) return { kind: 'one', server: readable[0] as string };
  if (readable.length > 1) return { kind: 'ambiguous', servers: readable };
  return { kind: 'none', hidden: servers };
}

/** Records the gate's denial of a read the caller may not make, on each server that offers the URI. */
export async function recordHiddenResource(
  view: CapabilityView,
  servers: readonly string[],
  uri: string,
  principal: string,
): Promise<void> {
  for (const server of servers) {
    await view.readResource(server, uri, { signal: refused(), principal }).catch(() => {});
  }
}

/** The refusal of a URI several servers offer: it names only servers the caller may read from. */
export function ambiguousResource(uri: string, servers: readonly string[]): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `Ambiguous resource: ${uri} is offered by ${servers.length} servers (${servers.join(', ')}), so the gateway serves it from none of them.`,
  );
}

/** Whether `uri` is an instance of `template` (a malformed template matches nothing). */
export function templateMatches(template: string, uri: string): boolean {
  try {
    return new UriTemplate(template).match(uri) !== null;
  } catch {
    return false;
  }
}
