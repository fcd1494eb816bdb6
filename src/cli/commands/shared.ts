/** What `call` and `check` share: reading `--args` / `--args-file`, and finding a tool by its exposed name. */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { closestKey } from '../../config/file-issues.js';
import { ToolNotFoundError } from '../../errors.js';
import { isJsonObject } from '../../json.js';
import type { ToolWrapper } from '../../tools/tool-wrapper.js';
import { UsageError } from '../exit.js';
import type { CliIO } from '../io.js';
import type { Project } from '../project.js';

export interface ArgsOptions {
  /** `--args`: the arguments as a JSON object. */
  args?: string | undefined;
  /** `--args-file`: a file holding them, or `-` for stdin. */
  argsFile?: string | undefined;
}

/** Largest `--args-file` read. */
const MAX_ARGS_BYTES = 16 * 1024 * 1024;

/** The call's arguments: `{}` when none are given. Throws `UsageError` for anything but a JSON object. */
export async function readArgs(io: CliIO, options: ArgsOptions): Promise<Record<string, unknown>> {
  if (options.args !== undefined && options.argsFile !== undefined) {
    throw new UsageError('Give the arguments with --args or with --args-file, not both.');
  }
  let text: string;
  let source: string;
  if (options.args !== undefined) {
    text = options.args;
    source = '--args';
  } else if (options.argsFile !== undefined) {
    source = options.argsFile === '-' ? 'stdin' : options.argsFile;
    text =
      options.argsFile === '-' ? await readStdin(io) : await readArgsFile(resolve(io.cwd, options.argsFile));
  } else {
    return {};
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(
      `The arguments in ${source} are not valid JSON (${(err as Error).message}). Write an object, e.g. --args '{"id":"drafts/x"}'.`,
      { cause: err },
    );
  }
  if (!isJsonObject(value)) {
    const found = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    throw new UsageError(
      `The arguments in ${source} must be a JSON object, e.g. {"id":"drafts/x"}; found ${found}.`,
    );
  }
  return value as Record<string, unknown>;
}

async function readArgsFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new UsageError(`Cannot read --args-file ${path}: ${(err as Error).message}`, { cause: err });
  }
}

async function readStdin(io: CliIO): Promise<string> {
  const input = io.stdin;
  if (input === undefined) throw new UsageError('--args-file - reads stdin, but there is none.');
  let text = '';
  for await (const chunk of input) {
    text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
    if (text.length > MAX_ARGS_BYTES) throw new UsageError('The arguments on stdin are larger than 16 MB.');
  }
  return text;
}

/** A tool name as a person may type it: the server it names, if any, and the tool's own name there. */
interface ToolQuery {
  server: string | undefined;
  /** Set for the `server/tool` forms; undefined for an exposed name or a bare one. */
  tool: string | undefined;
}

/**
 * Reads `mcp__notes__read_note`, `notes/read_note`, `notes:read_note`, `notes.read_note` and
 * `mcp:notes:read_note`. Server names hold no `/`, `:` or `.`, so the first one separates (tool names may hold
 * them: `notes/dir/read`). Forms that name no configured server leave `server` undefined.
 */
function parseToolQuery(project: Project, name: string): ToolQuery {
  const exposed = project.serverOf(name);
  if (exposed !== undefined) return { server: exposed, tool: undefined };
  const body = name.startsWith('mcp:') ? name.slice(4) : name;
  const match = /^([A-Za-z0-9_-]+)[/:.](.+)$/.exec(body);
  const server = match?.[1];
  if (server !== undefined && project.config.servers.some((s) => s.name === server)) {
    return { server, tool: match?.[2] };
  }
  return { server: undefined, tool: undefined };
}

/**
 * Connects the server a tool name points at (every server when it names none) and returns the tool with that
 * exposed name, or with `accept`, the tool another form names. Throws the connection error when its server
 * failed, `ToolNotFoundError` with suggestions (the exposed name another form means, or the nearest names)
 * when no tool matches.
 */
async function lookUp(project: Project, name: string, accept: boolean): Promise<ToolWrapper> {
  const query = parseToolQuery(project, name);
  const server = query.server;
  await project.connect(server === undefined ? undefined : [server]);
  const tool = project.manager.getTool(name);
  if (tool !== undefined) return tool;
  const tools = project.manager.tools;
  const meant =
    query.tool === undefined ? undefined : tools.find((t) => t.server === server && t.tool === query.tool);
  // A tool's own name (`echo`) finds its exposed names (`mcp__echo__echo`): the form people try first.
  const byTool = tools.filter((t) => t.tool.toLowerCase() === name.toLowerCase());
  if (accept) {
    if (meant !== undefined) return meant;
    const same = byTool.filter((t) => t.tool === name);
    if (same.length === 1) return same[0] as ToolWrapper;
    if (same.length > 1) {
      const listed = inFileOrder(project, same);
      // Issue 39: a name several servers have is ambiguous, not missing: list every full name.
      throw new UsageError(
        `'${name}' is ambiguous: ${listed.length} servers have a tool named '${name}': ${listed.map((t) => t.name).join(', ')}. Name one in full.`,
      );
    }
  }
  const failed = server === undefined ? undefined : project.outcomes.get(server);
  if (failed?.state === 'failed' && failed.error !== undefined) throw failed.error;
  if (failed?.state === 'disabled') {
    throw new UsageError(
      `Server '${server}' is disabled in ${project.config.file}; enable it to use '${name}'.`,
    );
  }
  project.warnFailed();
  let suggestions: string[];
  if (meant !== undefined) suggestions = [meant.name];
  else if (byTool.length > 0) suggestions = byTool.slice(0, 3).map((t) => t.name);
  else if (query.tool !== undefined) {
    const own = tools.filter((t) => t.server === server);
    const near = closestKey(
      query.tool,
      own.map((t) => t.tool),
    );
    suggestions = own.filter((t) => t.tool === near).map((t) => t.name);
  } else {
    const near = closestKey(
      name,
      tools.map((t) => t.name),
    );
    suggestions = near === undefined ? [] : [near];
  }
  throw new ToolNotFoundError(name, suggestions);
}

/**
 * `tools` ordered as the project file lists their servers (issue 39), each server's tools in the order it lists
 * them: not in the order the servers happened to finish connecting.
 */
export function inFileOrder(project: Project, tools: readonly ToolWrapper[]): ToolWrapper[] {
  const rank = new Map(project.config.servers.map((s, i) => [s.name, i]));
  const at = (t: ToolWrapper) => rank.get(t.server) ?? rank.size;
  // Array.prototype.sort is stable: a server's tools keep the order the server gave them.
  return [...tools].sort((a, b) => at(a) - at(b));
}

/**
 * The tool with this exposed name (`mcp__notes__read_note`), for `call`, `check` and `pins`: a gated call names
 * exactly what it calls. Another form (`notes/read_note`, `read_note`) is a `ToolNotFoundError` that suggests it.
 */
export function connectFor(project: Project, name: string): Promise<ToolWrapper> {
  return lookUp(project, name, false);
}

/**
 * The tool a person means, for `tools <name>`: the exposed name, any form {@link parseToolQuery} reads, or
 * the tool's own name when exactly one server has it. Connects only the server the name points at.
 */
export function findTool(project: Project, name: string): Promise<ToolWrapper> {
  return lookUp(project, name, true);
}
