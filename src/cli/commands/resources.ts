/**
 * `interlock resources [--server S]` lists the resources and resource templates of the project's servers with
 * the policy's verdict on each; `interlock resources read <uri>` reads one through the manager, gated on
 * `mcp-resource:{server}:{uri}` / `read` exactly as an agent's read is (issue 39). Denied: exit 3, as `call`.
 */
import { PermissionDeniedError } from '../../errors.js';
import { templateMatches } from '../../gateway/routing.js';
import type { ServerConnectionInfo } from '../../interop/connection.js';
import { resourceFor } from '../../security/pattern.js';
import { UsageError } from '../exit.js';
import { type Cell, oneLine, renderTable } from '../format.js';
import { visible } from '../io.js';
import { type CommandContext, Project } from '../project.js';
import { denialAdvice } from './call.js';
import { connectExtras, ExtraVerdicts, serverStates, verdictCells } from './extras.js';

export interface ResourcesOptions {
  /** `--server`: only this server (for `read`: the server to read from). */
  server?: string | undefined;
}

export async function resourcesCommand(ctx: CommandContext, options: ResourcesOptions): Promise<number> {
  const { printer } = ctx;
  const project = await Project.open(ctx);
  try {
    const connections = await connectExtras(project, options.server, !printer.json);
    const verdicts = new ExtraVerdicts(project);
    const resources = connections.flatMap((c) =>
      c.resources.map((r) => ({
        server: c.name,
        uri: r.uri,
        name: r.name,
        title: r.title ?? null,
        description: r.description ?? null,
        mimeType: r.mimeType ?? null,
        ...verdicts.explain(resourceFor.resource(c.name, r.uri), 'read'),
      })),
    );
    // A template's verdict is the policy's on its text: a rule such as `mcp-resource:s:notes://*` covers
    // `notes://{id}`; each read is still decided on its own URI.
    const templates = connections.flatMap((c) =>
      c.resourceTemplates.map((t) => ({
        server: c.name,
        uriTemplate: t.uriTemplate,
        name: t.name,
        title: t.title ?? null,
        description: t.description ?? null,
        mimeType: t.mimeType ?? null,
        ...verdicts.explain(resourceFor.resource(c.name, t.uriTemplate), 'read'),
      })),
    );
    if (printer.json) {
      printer.data({ resources, templates, servers: serverStates(project) });
    } else if (resources.length === 0 && templates.length === 0) {
      printer.line('No resources.');
    } else {
      const rows: Cell[][] = [
        ...resources.map((r) => [r.uri, r.server, ...verdictCells(r), oneLine(r.description ?? r.name)]),
        ...templates.map((t) => [
          `${t.uriTemplate} (template)`,
          t.server,
          ...verdictCells(t),
          oneLine(t.description ?? t.name),
        ]),
      ];
      printer.line(renderTable(printer, ['URI', 'SERVER', 'VERDICT', 'RULE', 'DESCRIPTION'], rows));
    }
    return project.failed.length > 0 ? 1 : 0;
  } finally {
    await project.close();
  }
}

export async function readResourceCommand(
  ctx: CommandContext,
  uri: string,
  options: ResourcesOptions,
): Promise<number> {
  const { printer } = ctx;
  const project = await Project.open(ctx);
  try {
    const connections = await connectExtras(project, options.server, !printer.json);
    const server = options.server ?? ownerOf(project, connections, uri);
    const failed = project.outcomes.get(server);
    if (failed?.state === 'failed' && failed.error !== undefined) throw failed.error;
    const signal = ctx.io.signal;
    const result = await project
      .interruptible(project.manager.readResource(server, uri, signal === undefined ? {} : { signal }))
      .catch((err: unknown) => {
        if (!(err instanceof PermissionDeniedError)) throw err;
        throw denialAdvice(project, err, undefined);
      });
    if (printer.json) {
      printer.data({ server, uri, contents: result.contents });
      return 0;
    }
    for (const content of result.contents) {
      if ('text' in content && typeof content.text === 'string') {
        // A server's text must not drive the terminal; piped, it goes out as it came.
        const text = printer.stdoutIsTTY ? visible(content.text) : content.text;
        printer.write(text.endsWith('\n') ? text : `${text}\n`);
      } else if ('blob' in content && typeof content.blob === 'string') {
        const bytes = Buffer.byteLength(content.blob, 'base64');
        printer.line(
          `[${content.mimeType ?? 'binary'}, ${bytes} bytes of ${visible(content.uri)}: --json shows them in base64]`,
        );
      }
    }
    return 0;
  } finally {
    await project.close();
  }
}

/**
 * The server that lists `uri`, else the one whose template matches it, as the gateway decides. Two servers
 * that both have it are a usage error: the person says which with `--server`.
 */
function ownerOf(project: Project, connections: readonly ServerConnectionInfo[], uri: string): string {
  const listing = connections.filter((c) => c.resources.some((r) => r.uri === uri));
  const owners =
    listing.length > 0
      ? listing
      : connections.filter((c) => c.resourceTemplates.some((t) => templateMatches(t.uriTemplate, uri)));
  const [first, second] = owners;
  if (first !== undefined && second === undefined) return first.name;
  if (first !== undefined) {
    throw new UsageError(
      `Servers ${owners.map((c) => `'${c.name}'`).join(', ')} all have '${uri}'; name one with --server.`,
    );
  }
  const failed = project.failed.map(([name]) => name);
  throw new UsageError(
    `No connected server lists the resource '${uri}' or a template it matches${failed.length > 0 ? ` (not connected: ${failed.join(', ')})` : ''}. 'interlock resources' lists them; name the server with --server to read a URI it does not list.`,
  );
}
