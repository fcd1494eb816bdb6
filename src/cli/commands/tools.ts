/** `interlock tools [--server S]`: every exposed tool with its server, a one-line description and the verdict. */
import { type Cell, oneLine, renderTable } from '../format.js';
import { type CommandContext, Project } from '../project.js';
import { VerdictExplainer } from '../verdict.js';

export interface ToolsOptions {
  server?: string | undefined;
}

const VERDICT_STYLE = { allowed: 'green', denied: 'red', ask: 'yellow', conditional: 'cyan' } as const;

export async function toolsCommand(ctx: CommandContext, options: ToolsOptions): Promise<number> {
  const project = await Project.open(ctx);
  const { printer } = ctx;
  try {
    await project.connect(options.server === undefined ? undefined : [options.server]);
    await project.savePins();
    if (!printer.json) project.warnFailed();
    const explainer = new VerdictExplainer(project.capabilities);
    const blocked = new Set(project.manager.blockedTools.map((b) => b.name));
    const tools = project.manager.tools
      .filter((t) => options.server === undefined || t.server === options.server)
      .map((tool) => {
        const verdict = explainer.explain(`mcp:${tool.server}:${tool.tool}`, 'execute', {
          agent: project.config.agent,
          annotations: tool.annotations,
        });
        return {
          name: tool.name,
          server: tool.server,
          tool: tool.tool,
          title: tool.title ?? null,
          description: tool.description,
          // What the server said about the tool (issue 13): untrusted hints and display data, shown as sent.
          icons: tool.icons ?? [],
          annotations: tool.annotations ?? null,
          outputSchema: tool.outputSchema ?? null,
          verdict: verdict.verdict,
          effect: verdict.effect,
          rule: verdict.rule ?? null,
          reason: verdict.reason,
          blocked: blocked.has(tool.name),
        };
      });
    if (printer.json) {
      const servers = [...project.outcomes].map(([name, o]) => ({
        name,
        state: o.state,
        error: o.error?.message ?? null,
      }));
      printer.data({ tools, servers });
    } else if (tools.length === 0) {
      printer.line('No tools.');
    } else {
      const rows: Cell[][] = tools.map((t) => [
        t.name,
        t.server,
        { text: t.blocked ? 'blocked' : t.verdict, style: t.blocked ? 'red' : VERDICT_STYLE[t.verdict] },
        t.rule?.id ?? (t.effect === 'default-deny' ? '(default deny)' : '-'),
        oneLine(t.description),
      ]);
      printer.line(renderTable(printer, ['TOOL', 'SERVER', 'VERDICT', 'RULE', 'DESCRIPTION'], rows));
    }
    return project.failed.length > 0 ? 1 : 0;
  } finally {
    await project.close();
  }
}
