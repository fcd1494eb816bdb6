/**
 * Reads the MCP configuration files people already have: Claude Desktop, Cursor and `.mcp.json`
 * (`{ "mcpServers": { name: {...} } }`) and VS Code (`{ "servers": { name: {...} } }`), with `${VAR}` and
 * `${VAR:-default}` expansion in every string (see `./env.ts`).
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ConfigError, type ConfigIssue } from '../errors.js';
import { isJsonObject } from '../json.js';
import { once } from '../lazy.js';
import { appendPath, describeIssues, toConfigIssues } from '../zod-issues.js';
import { type ExpandEnvOptions, type ExpansionContext, expanded } from './env.js';
import { type MCPServerConfig, serverSchemas } from './servers.js';

/** Options for {@link loadMCPConfig}. */
export type LoadMCPConfigOptions = ExpandEnvOptions;

const HTTP_TYPES: Record<string, MCPServerConfig['transport']> = {
  sse: 'sse',
  http: 'http',
  'streamable-http': 'http',
  streamableHttp: 'http',
  streamable_http: 'http',
};

/** Translates one entry of an `mcpServers` / `servers` map into our config shape (not yet validated). */
function translateEntry(name: string, entry: unknown, ctx: z.RefinementCtx): unknown {
  const issue = (message: string, path: string[] = []) => ctx.addIssue({ code: 'custom', message, path });
  if (!isJsonObject(entry)) {
    issue('expected an object with "command" or "url"');
    return z.NEVER;
  }
  const { type, disabled, ...rest } = entry;
  const out: Record<string, unknown> = { name, ...rest };
  if (disabled !== undefined) out.enabled = disabled !== true;
  if (out.transport !== undefined) return out;
  if (typeof rest.command === 'string') {
    if (type !== undefined && type !== 'stdio') {
      issue(`'${String(type)}' does not go with "command"; use 'stdio'`, ['type']);
    }
    out.transport = 'stdio';
  } else if (typeof rest.url === 'string') {
    if (type === undefined) out.transport = 'auto';
    else if (typeof type === 'string' && HTTP_TYPES[type] !== undefined) out.transport = HTTP_TYPES[type];
    else issue(`expected 'http' or 'sse', found '${String(type)}'`, ['type']);
  } else {
    // `comand: node` is a typo, not a server without a command: name the unknown field (the project file
    // loader adds the "did you mean").
    const unknown = Object.keys(rest).filter((key) => !entryKeys().has(key));
    issue(
      unknown.length > 0
        ? `unknown field(s) ${unknown.map((k) => `'${k}'`).join(', ')}`
        : 'expected "command" (stdio server) or "url" (remote server)',
    );
  }
  return out;
}

/** Every field a server entry may have, over all transports. */
const entryKeys = once(
  (): ReadonlySet<string> =>
    new Set([
      'type',
      'disabled',
      ...serverSchemas().MCPServerConfigSchema.options.flatMap((o) => Object.keys(o.shape)),
    ]),
);

/**
 * One entry of an `mcpServers` / `servers` map as the schema that loads it (issue 15, "config parsed once"):
 * variables expanded, the file format's `type` and `disabled` translated to our fields, then validated by
 * `MCPServerConfigSchema`, whose output type it has. Each stage stops the entry at its first problems.
 */
export function serverEntrySchema(name: string, ctx: ExpansionContext) {
  return expanded(
    z
      .unknown()
      .transform((entry, zod) => translateEntry(name, entry, zod))
      .pipe(serverSchemas().MCPServerConfigSchema),
    ctx,
  );
}

/**
 * Turns a parsed `mcp.json`-style object into validated server configs. Accepts `mcpServers` (Claude Desktop,
 * Cursor, `.mcp.json`) or `servers` (VS Code). Throws {@link ConfigError} listing every problem at once.
 */
export function parseMCPConfig(
  input: unknown,
  options: LoadMCPConfigOptions & {
    file?: string;
    /**
     * Names to use instead of the file's keys (`{ "my.server": "my_server" }`), for files written for clients
     * that accept names Interlock cannot (a dot, a space, `__`). Error paths keep the key as written.
     */
    rename?: Readonly<Record<string, string>>;
    /** Called with each entry as written, before expansion (the project file keeps its secrets). */
    collect?: ExpansionContext['collect'];
  } = {},
): MCPServerConfig[] {
  const where = options.file === undefined ? 'MCP config' : `MCP config ${options.file}`;
  if (!isJsonObject(input)) {
    throw new ConfigError(`Invalid ${where}: expected a JSON object with "mcpServers" or "servers"`, {
      file: options.file,
      issues: [{ path: '(root)', message: 'expected an object' }],
    });
  }
  const root = input;
  const key =
    root.mcpServers !== undefined ? 'mcpServers' : root.servers !== undefined ? 'servers' : undefined;
  const map = key === undefined ? undefined : root[key];
  if (key === undefined || !isJsonObject(map)) {
    throw new ConfigError(
      `Invalid ${where}: expected "mcpServers" (or VS Code's "servers") to be an object`,
      {
        file: options.file,
        issues: [{ path: key ?? 'mcpServers', message: 'expected an object of servers by name' }],
      },
    );
  }
  const issues: ConfigIssue[] = [];
  const configs: MCPServerConfig[] = [];
  const rename = options.rename ?? {};
  for (const [written, entry] of Object.entries(map)) {
    const name = Object.hasOwn(rename, written) ? (rename[written] as string) : written;
    const parsed = serverEntrySchema(name, {
      env: options.env ?? process.env,
      collect: options.collect,
    }).safeParse(entry);
    if (parsed.success) configs.push(parsed.data);
    else issues.push(...toConfigIssues(parsed.error, appendPath(key, written)));
  }
  const seen = new Set<string>();
  for (const config of configs) {
    if (seen.has(config.name)) {
      issues.push({ path: key, message: `two servers are named '${config.name}' after renaming` });
    }
    seen.add(config.name);
  }
  if (issues.length > 0) {
    throw new ConfigError(`Invalid ${where}: ${describeIssues(issues)}`, {
      file: options.file,
      issues,
    });
  }
  return configs;
}

/**
 * Loads server configs from a file path (JSON, comments allowed as in VS Code's `mcp.json`) or from an object
 * already in memory. Throws {@link ConfigError} naming the file and field paths.
 */
export async function loadMCPConfig(
  pathOrObject: string | object,
  options: LoadMCPConfigOptions = {},
): Promise<MCPServerConfig[]> {
  if (typeof pathOrObject !== 'string') return parseMCPConfig(pathOrObject, options);
  let text: string;
  try {
    text = await readFile(pathOrObject, 'utf8');
  } catch (err) {
    throw new ConfigError(`Cannot read MCP config ${pathOrObject}: ${(err as Error).message}`, {
      cause: err,
      file: pathOrObject,
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(stripJsonComments(text));
  } catch (err) {
    throw new ConfigError(`MCP config ${pathOrObject} is not valid JSON: ${(err as Error).message}`, {
      cause: err,
      file: pathOrObject,
    });
  }
  return parseMCPConfig(parsed, { ...options, file: pathOrObject });
}

/** Removes `//` and `/* *\/` comments and trailing commas outside strings (JSONC, as VS Code writes). */
export function stripJsonComments(text: string): string {
  let out = '';
  let pendingComma = false;
  let i = 0;
  while (i < text.length) {
    const ch = text[i] as string;
    if (ch === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    if (ch === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 2;
      continue;
    }
    if (/\s/.test(ch)) {
      out += ch;
      i++;
      continue;
    }
    // A significant character: a comma held back is kept unless it closes an object or array.
    if (pendingComma && ch !== '}' && ch !== ']') out += ',';
    pendingComma = false;
    if (ch === ',') {
      pendingComma = true;
      i++;
    } else if (ch === '"') {
      const start = i;
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      out += text.slice(start, i + 1);
      i++;
    } else {
      out += ch;
      i++;
    }
  }
  return pendingComma ? `${out},` : out;
}
