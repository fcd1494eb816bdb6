/** `interlock servers`: connect every server in parallel with live progress, then one row per server. */
import { type Cell, formatMs, oneLine, renderTable } from '../format.js';
import { visible } from '../io.js';
import { ConnectProgress } from '../progress.js';
import { type CommandContext, Project, type ServerOutcome } from '../project.js';

export async function serversCommand(ctx: CommandContext): Promise<number> {
  const project = await Project.open(ctx);
  const { printer } = ctx;
  try {
    const servers = project.config.servers;
    const progress = printer.json ? undefined : new ConnectProgress(printer, servers);
    try {
      await project.connect(undefined, progress);
    } finally {
      progress?.stop();
    }
    await project.savePins();
    const rows = servers.map((config) => {
      const outcome: ServerOutcome = project.outcomes.get(config.name) ?? { state: 'disabled' };
      const connection = project.manager.getConnection(config.name);
      return {
        name: config.name,
        transport: connection?.transport ?? config.transport,
        /** The MCP revision agreed with the server; null until it connected. */
        protocol: connection?.protocolVersion ?? null,
        state: outcome.state,
        tools: project.manager.tools.filter((t) => t.server === config.name).length,
        connectMs: outcome.durationMs === undefined ? null : Math.round(outcome.durationMs),
        error:
          outcome.error === undefined
            ? null
            : { code: (outcome.error as { code?: string }).code ?? 'ERROR', message: outcome.error.message },
      };
    });
    if (printer.json) {
      printer.data({ servers: rows });
    } else {
      const style = { ready: 'green', failed: 'red', disabled: 'dim', connecting: 'yellow' } as const;
      const table: Cell[][] = rows.map((r) => [
        r.name,
        r.transport,
        r.protocol ?? '-',
        { text: r.state, style: style[r.state] },
        r.state === 'ready' ? String(r.tools) : '-',
        formatMs(r.connectMs ?? undefined),
        r.error === null ? '' : oneLine(r.error.message, 200),
      ]);
      printer.line();
      printer.line(
        renderTable(printer, ['NAME', 'TRANSPORT', 'PROTOCOL', 'STATE', 'TOOLS', 'CONNECT', 'ERROR'], table),
      );
      // The table holds the first line of an error, cut; the whole error (a server's last stderr lines, advice
      // that did not fit) follows it.
      for (const r of rows) {
        if (r.error === null) continue;
        if (oneLine(r.error.message, 200) !== r.error.message) {
          printer.line();
          printer.line(`${printer.style('bold', r.name)}: ${visible(r.error.message)}`);
        }
        project.printDetail(project.outcomes.get(r.name)?.error);
      }
    }
    return rows.some((r) => r.state === 'failed') ? 1 : 0;
  } finally {
    await project.close();
  }
}
