/**
 * `interlock tools [--server S]`: every exposed tool with its server, a one-line description and the verdict.
 * `interlock tools <name>` (also `interlock describe <name>`): one tool in full, with its description, its
 * arguments as a readable table (issue 18, item 4), the verdict and what to change about it.
 */
import { resourceFor } from '../../security/pattern.js';
import type { ToolWrapper } from '../../tools/tool-wrapper.js';
import { indent } from '../advice.js';
import { type Cell, oneLine, renderTable } from '../format.js';
import { type Printer, visible } from '../io.js';
import { type CommandContext, Project } from '../project.js';
import { MAX_SCHEMA_DEPTH, schemaRows } from '../schema-view.js';
import { type ToolVerdict, VerdictExplainer } from '../verdict.js';
import { findTool, inFileOrder } from './shared.js';

export interface ToolsOptions {
  server?: string | undefined;
}

const VERDICT_STYLE = { allowed: 'green', denied: 'red', ask: 'yellow', conditional: 'cyan' } as const;

export async function toolsCommand(
  ctx: CommandContext,
  name: string | undefined,
  options: ToolsOptions,
): Promise<number> {
  const project = await Project.open(ctx);
  try {
    if (name === undefined) return await listTools(ctx, project, options);
    // `--server notes read_note` is `notes/read_note`.
    const named =
      options.server !== undefined && !name.startsWith('mcp__') && !/[/:.]/.test(name)
        ? `${options.server}/${name}`
        : name;
    return await describeTool(ctx, project, named);
  } finally {
    await project.close();
  }
}

/** What `--json` shows of a tool: its identity, description, schemas and the verdict. */
function toolData(
  project: Project,
  explainer: VerdictExplainer,
  blocked: ReadonlySet<string>,
  tool: ToolWrapper,
) {
  const resource = resourceFor.tool(tool.server, tool.tool);
  const verdict = explainer.explain(resource, 'execute', {
    agent: project.config.agent,
    annotations: tool.annotations,
  });
  const advice =
    verdict.verdict === 'allowed' ? undefined : project.advisor.advise(verdict, resource, 'execute');
  return {
    verdictDetail: verdict,
    advice,
    data: {
      name: tool.name,
      server: tool.server,
      tool: tool.tool,
      title: tool.title ?? null,
      description: tool.description,
      // What the server said about the tool (issue 13): untrusted hints and display data, shown as sent.
      icons: tool.icons ?? [],
      annotations: tool.annotations ?? null,
      verdict: verdict.verdict,
      effect: verdict.effect,
      rule: verdict.rule ?? null,
      reason: advice?.reason ?? verdict.reason,
      blocked: blocked.has(tool.name),
      inputSchema: tool.inputSchema,
      outputSchema: tool.outputSchema ?? null,
    },
  };
}

async function listTools(ctx: CommandContext, project: Project, options: ToolsOptions): Promise<number> {
  const { printer } = ctx;
  await project.connect(options.server === undefined ? undefined : [options.server]);
  await project.savePins();
  if (!printer.json) project.warnFailed();
  const explainer = new VerdictExplainer(project.capabilities);
  const blocked = new Set(project.manager.blockedTools.map((b) => b.name));
  const tools = inFileOrder(project, project.manager.tools)
    .filter((t) => options.server === undefined || t.server === options.server)
    .map((tool) => toolData(project, explainer, blocked, tool).data);
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
    if (printer.stdoutIsTTY) {
      printer.line();
      printer.line(printer.style('dim', 'One tool in full, with its arguments: interlock tools <name>'));
    }
  }
  return project.failed.length > 0 ? 1 : 0;
}

async function describeTool(ctx: CommandContext, project: Project, name: string): Promise<number> {
  const { printer } = ctx;
  const tool = await findTool(project, name);
  await project.savePins();
  const explainer = new VerdictExplainer(project.capabilities);
  const blockedTool = project.manager.blockedTools.find((b) => b.name === tool.name);
  const blocked = new Set(blockedTool === undefined ? [] : [tool.name]);
  const { data, verdictDetail, advice } = toolData(project, explainer, blocked, tool);
  if (printer.json) {
    printer.data({ tool: { ...data, hint: advice?.fix ?? null } });
    return 0;
  }
  const label = (key: string) => printer.style('dim', key.padEnd(10));
  printer.line(printer.style('bold', tool.name));
  printer.line(`${label('server')}${tool.server}  (tool '${visible(tool.tool)}' there)`);
  if (tool.title !== undefined) printer.line(`${label('title')}${visible(tool.title)}`);
  printer.line(`${label('verdict')}${verdictLine(printer, verdictDetail, blockedTool !== undefined)}`);
  if (advice !== undefined) printer.line(`${label('reason')}${visible(advice.reason)}`);
  if (advice?.fix !== undefined)
    printer.line(`${label('hint')}${indent(visible(advice.fix), 10).trimStart()}`);
  if (blockedTool !== undefined) {
    printer.line(
      `${label('pin')}definition changed since pinned: review it with 'interlock pins', then: interlock pins --approve ${tool.name} --hash ${blockedTool.currentHash.slice(0, 12)}`,
    );
  }
  const hints = annotationHints(tool);
  if (hints !== '') printer.line(`${label('behaviour')}${hints}`);
  printer.line();
  const description = visible(tool.description.trim());
  const width = Math.min(printer.columns ?? 100, 100) - 2;
  printer.line(
    description === '' ? printer.style('dim', '(no description)') : indent(wrap(description, width), 2),
  );
  printer.line();
  printSchema(printer, 'Arguments', tool.inputSchema, 'none: call it with no arguments');
  if (tool.outputSchema !== undefined) {
    printer.line();
    printSchema(printer, 'Structured result (output schema)', tool.outputSchema, 'no fields');
  }
  return 0;
}

function verdictLine(printer: Printer, verdict: ToolVerdict, blocked: boolean): string {
  const text = printer.style(
    blocked ? 'red' : VERDICT_STYLE[verdict.verdict],
    blocked ? 'BLOCKED' : verdict.verdict.toUpperCase(),
  );
  const rule = verdict.rule === undefined ? '' : `, rule ${verdict.rule.id}`;
  return `${text}  (${verdict.effect}${rule})`;
}

/** `read-only, idempotent`: what the server says about the tool's behaviour (hints, not guarantees). */
function annotationHints(tool: ToolWrapper): string {
  const a = tool.annotations;
  if (a === undefined) return '';
  const out: string[] = [];
  if (a.readOnlyHint === true) out.push('read-only');
  if (a.destructiveHint === true) out.push('destructive');
  if (a.destructiveHint === false && a.readOnlyHint !== true) out.push('not destructive');
  if (a.idempotentHint === true) out.push('idempotent');
  if (a.openWorldHint === true) out.push('open world');
  if (a.openWorldHint === false) out.push('closed world');
  return out.length === 0 ? '' : `${out.join(', ')} (as the server says)`;
}

function printSchema(printer: Printer, title: string, schema: unknown, empty: string): void {
  const { rows, truncated } = schemaRows(schema);
  if (rows.length === 0) {
    printer.line(`${printer.style('bold', `${title}:`)} ${empty}`);
    return;
  }
  printer.line(printer.style('bold', `${title}:`));
  const cells: Cell[][] = rows.map((r) => [
    `${'  '.repeat(r.depth)}${r.name}`,
    r.type,
    r.name === '…' ? '' : r.required ? { text: 'required', style: 'yellow' } : 'optional',
    r.about,
  ]);
  printer.line(renderTable(printer, ['NAME', 'TYPE', 'REQUIRED', 'DESCRIPTION'], cells, { indent: 2 }));
  if (truncated > 0) printer.line(`  … and ${truncated} more fields (the whole schema: --json)`);
  if (rows.some((r) => r.name === '…')) {
    printer.line(`  … nested deeper than ${MAX_SCHEMA_DEPTH} levels (the whole schema: --json)`);
  }
}

/** `text` with its lines broken at spaces to at most `width` characters (longer words stay whole). */
function wrap(text: string, width: number): string {
  return text
    .split('\n')
    .map((line) => {
      const out: string[] = [];
      let current = '';
      for (const word of line.split(' ')) {
        if (current !== '' && current.length + 1 + word.length > width) {
          out.push(current);
          current = word;
        } else {
          current = current === '' ? word : `${current} ${word}`;
        }
      }
      out.push(current);
      return out.join('\n');
    })
    .join('\n');
}
