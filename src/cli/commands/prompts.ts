/**
 * `interlock prompts [--server S]` lists the prompts of the project's servers with the policy's verdict on each;
 * `interlock prompts get <name> [--args JSON]` gets one through the manager, gated on `mcp-prompt:{server}:{name}`
 * / `get` exactly as an agent's request is (issue 39). Denied: exit 3, as `call`.
 */
import type { Prompt } from '@modelcontextprotocol/client';
import { PermissionDeniedError } from '../../errors.js';
import type { ServerConnectionInfo } from '../../interop/connection.js';
import { resourceFor } from '../../security/pattern.js';
import { UsageError } from '../exit.js';
import { type Cell, oneLine, renderTable } from '../format.js';
import { visible } from '../io.js';
import { type CommandContext, Project } from '../project.js';
import { denialAdvice } from './call.js';
import { connectExtras, ExtraVerdicts, serverStates, verdictCells } from './extras.js';
import { type ArgsOptions, readArgs } from './shared.js';

export interface PromptsOptions {
  /** `--server`: only this server (for `get`: the server the prompt is on). */
  server?: string | undefined;
}

/** A prompt's name as the gateway exposes it: `mcp__{server}__{prompt}`. */
const exposed = (server: string, prompt: string) => `mcp__${server}__${prompt}`;

export async function promptsCommand(ctx: CommandContext, options: PromptsOptions): Promise<number> {
  const { printer } = ctx;
  const project = await Project.open(ctx);
  try {
    const connections = await connectExtras(project, options.server, !printer.json);
    const verdicts = new ExtraVerdicts(project);
    const prompts = connections.flatMap((c) =>
      c.prompts.map((p) => ({
        name: exposed(c.name, p.name),
        server: c.name,
        prompt: p.name,
        title: p.title ?? null,
        description: p.description ?? null,
        arguments: p.arguments ?? [],
        ...verdicts.explain(resourceFor.prompt(c.name, p.name), 'get'),
      })),
    );
    if (printer.json) {
      printer.data({ prompts, servers: serverStates(project) });
    } else if (prompts.length === 0) {
      printer.line('No prompts.');
    } else {
      const rows: Cell[][] = prompts.map((p) => [
        p.name,
        p.server,
        ...verdictCells(p),
        p.arguments.map((a) => (a.required === true ? a.name : `[${a.name}]`)).join(' ') || '-',
        oneLine(p.description ?? ''),
      ]);
      printer.line(
        renderTable(printer, ['PROMPT', 'SERVER', 'VERDICT', 'RULE', 'ARGUMENTS', 'DESCRIPTION'], rows),
      );
    }
    return project.failed.length > 0 ? 1 : 0;
  } finally {
    await project.close();
  }
}

export async function getPromptCommand(
  ctx: CommandContext,
  name: string,
  options: PromptsOptions & ArgsOptions,
): Promise<number> {
  const { printer } = ctx;
  const args = promptArgs(await readArgs(ctx.io, options));
  const project = await Project.open(ctx);
  try {
    const server = options.server ?? serverNamed(project, name);
    const connections = await connectExtras(project, server, !printer.json);
    const failed = server === undefined ? undefined : project.outcomes.get(server);
    if (failed?.state === 'failed' && failed.error !== undefined) throw failed.error;
    const target = findPrompt(connections, name, server);
    const signal = ctx.io.signal;
    const result = await project
      .interruptible(
        project.manager.getPrompt(
          target.server,
          target.prompt.name,
          args,
          signal === undefined ? {} : { signal },
        ),
      )
      .catch((err: unknown) => {
        if (!(err instanceof PermissionDeniedError)) throw err;
        throw denialAdvice(project, err, undefined);
      });
    if (printer.json) {
      printer.data({
        name: exposed(target.server, target.prompt.name),
        server: target.server,
        prompt: target.prompt.name,
        ...(result.description === undefined ? {} : { description: result.description }),
        messages: result.messages,
      });
      return 0;
    }
    for (const message of result.messages) {
      const content = message.content;
      const text =
        content.type === 'text'
          ? content.text
          : content.type === 'resource' && 'text' in content.resource
            ? String(content.resource.text)
            : `[${content.type}${'mimeType' in content ? `: ${String(content.mimeType)}` : ''}; --json shows it]`;
      printer.line(
        `${printer.style('bold', `${message.role}:`)} ${printer.stdoutIsTTY ? visible(text) : text}`,
      );
    }
    return 0;
  } finally {
    await project.close();
  }
}

/** MCP prompt arguments are strings (MCP 2025-11-25 prompts/get: `arguments: { [key]: string }`). */
function promptArgs(args: Record<string, unknown>): Record<string, string> {
  const wrong = Object.entries(args).filter(([, value]) => typeof value !== 'string');
  if (wrong.length > 0) {
    throw new UsageError(
      `Prompt arguments are strings; ${wrong.map(([key]) => `'${key}'`).join(', ')} ${wrong.length === 1 ? 'is' : 'are'} not, e.g. --args '{"name":"Ada"}'.`,
    );
  }
  return args as Record<string, string>;
}

/** The server an exposed (`mcp__s__p`) or `s/p` name names, when it is a configured one. */
function serverNamed(project: Project, name: string): string | undefined {
  const server = /^mcp__(.+?)__./.exec(name)?.[1] ?? /^([A-Za-z0-9_-]+)\/./.exec(name)?.[1];
  return server !== undefined && project.config.servers.some((s) => s.name === server) ? server : undefined;
}

/** The prompt `name` means: its exposed name, `server/prompt`, or its own name when one server has it. */
function findPrompt(
  connections: readonly ServerConnectionInfo[],
  name: string,
  server: string | undefined,
): { server: string; prompt: Prompt } {
  const all = connections.flatMap((c) => c.prompts.map((prompt) => ({ server: c.name, prompt })));
  const matches = all.filter(
    (p) =>
      exposed(p.server, p.prompt.name) === name ||
      `${p.server}/${p.prompt.name}` === name ||
      ((server === undefined || p.server === server) && p.prompt.name === name),
  );
  const [first, second] = matches;
  if (first !== undefined && second === undefined) return first;
  if (first !== undefined) {
    throw new UsageError(
      `Prompt '${name}' is on more than one server: ${matches.map((m) => exposed(m.server, m.prompt.name)).join(', ')}. Name one of those.`,
    );
  }
  throw new UsageError(
    `No prompt named '${name}'${server === undefined ? '' : ` on '${server}'`}. 'interlock prompts' lists them.`,
  );
}
