/**
 * `interlock init [--from FILE] [--template NAME] [--force]` (issue 39, "Missing that users expect"): writes a
 * commented project file. Servers come from the project's own `mcp.json` when it has one (referenced with
 * `mcpConfig`, so the desktop client and Interlock read the same list), and the policy starts with no rules: nothing
 * is allowed until a rule says so, and the comments show how to write one. With `--template`, the policy is one of
 * the information-flow templates instead (issue 42).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { firstExisting, safeName } from '../../config/load.js';
import { stripJsonComments } from '../../config/mcp-json.js';
import { DEFAULT_CONFIG_FILES } from '../../config/schema.js';
import { isJsonObject } from '../../json.js';
import { HintedError, UsageError } from '../exit.js';
import type { CommandContext } from '../project.js';
import { templatePolicy } from './init-templates.js';

export interface InitOptions {
  /** `--from`: the mcp.json to take the servers from. @default the first of {@link MCP_JSON_PLACES} found */
  from?: string | undefined;
  /** `--force`: replace an existing project file. */
  force?: boolean | undefined;
  /** `--template`: start the policy from this template (one of `POLICY_TEMPLATES`). @default no rules */
  template?: string | undefined;
}

/** Where projects keep an mcp.json, looked for in this order: Claude Code, plain, VS Code, Cursor. */
export const MCP_JSON_PLACES: readonly string[] = Object.freeze([
  '.mcp.json',
  'mcp.json',
  '.vscode/mcp.json',
  '.cursor/mcp.json',
]);

/** The servers of an mcp.json as `init` reads them: by the names written there, and the key that holds them. */
interface McpJson {
  /** The path written into the project file (relative to it, `./` first). */
  path: string;
  names: string[];
}

export async function initCommand(ctx: CommandContext, options: InitOptions): Promise<number> {
  const { printer, io } = ctx;
  const target = resolve(io.cwd, ctx.configFile ?? DEFAULT_CONFIG_FILES[0] ?? 'interlock.config.yaml');
  if (!/\.ya?ml$/i.test(target)) {
    throw new UsageError(`interlock init writes YAML (with comments): name a .yaml file, not ${target}.`);
  }
  if (options.force !== true) {
    // Another default name beside the new file would be read first, or be shadowed by it.
    const existing =
      ctx.configFile === undefined
        ? await firstExisting(DEFAULT_CONFIG_FILES.map((name) => resolve(io.cwd, name)))
        : await firstExisting([target]);
    if (existing !== undefined) {
      throw new HintedError(
        new UsageError(`${shown(io.cwd, existing)} already exists; interlock init leaves it as it is.`),
        'to replace it with a new file, run interlock init --force',
      );
    }
  }
  const template = options.template === undefined ? undefined : await templatePolicy(options.template);
  const source = await findMcpJson(io.cwd, target, options.from);
  const text = projectFileText(source, template);
  await writeFile(target, text, { encoding: 'utf8', flag: options.force === true ? 'w' : 'wx' }).catch(
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'EEXIST') {
        throw new UsageError(
          `${shown(io.cwd, target)} already exists; run interlock init --force to replace it.`,
        );
      }
      throw new UsageError(`Cannot write ${target}: ${err.message}`, { cause: err });
    },
  );
  const file = shown(io.cwd, target);
  if (printer.json) {
    printer.data({
      file: target,
      mcpConfig: source?.path ?? null,
      servers: source?.names.map((name) => ({ name, as: safeName(name) })) ?? [],
      template: options.template ?? null,
    });
    return 0;
  }
  printer.line(
    source === undefined
      ? `Wrote ${file}: no mcp.json here, so add your servers under mcpServers.`
      : `Wrote ${file} with the servers of ${source.path}: ${source.names.map(safeName).join(', ') || '(none)'}.`,
  );
  if (options.template !== undefined) {
    printer.line(`Its policy is the ${options.template} template. Next:`);
    printer.line('  fill in the placeholders its comments name (your addresses, trusted contacts or payees)');
    printer.line('  interlock check <tool>     shows which of its rules decides a call, and why');
    return 0;
  }
  printer.line('Its policy allows nothing yet. Next:');
  printer.line(
    "  interlock tools            every tool, all denied; 'interlock tools <name>' shows the rule to add",
  );
  printer.line(`  then add rules under policy.rules in ${file} (its comments show how)`);
  return 0;
}

function shown(cwd: string, path: string): string {
  const rel = relative(cwd, path);
  return rel === '' || rel.startsWith('..') ? path : rel;
}

/** The mcp.json named with `--from`, else the first of {@link MCP_JSON_PLACES}; its server names. */
async function findMcpJson(
  cwd: string,
  target: string,
  from: string | undefined,
): Promise<McpJson | undefined> {
  const file =
    from === undefined
      ? await firstExisting(MCP_JSON_PLACES.map((p) => resolve(cwd, p)))
      : resolve(cwd, from);
  if (file === undefined) return undefined;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`Cannot read ${file}: ${(err as Error).message}`, { cause: err });
  }
  let data: unknown;
  try {
    data = JSON.parse(stripJsonComments(text));
  } catch (err) {
    throw new UsageError(
      `${file} is not valid JSON (${(err as Error).message}); fix it or name another with --from.`,
      {
        cause: err,
      },
    );
  }
  const map = isJsonObject(data) ? (data.mcpServers ?? data.servers) : undefined;
  if (!isJsonObject(map)) {
    throw new UsageError(
      `${file} has no "mcpServers" (or VS Code's "servers") object; name another file with --from, or none.`,
    );
  }
  // Relative to the project file, as `mcpConfig` paths are; `./` so that a reader sees it is a path.
  const rel = relative(dirname(target), file).split(sep).join('/');
  const path = isAbsolute(rel) || rel.startsWith('../') ? rel : `./${rel}`;
  return { path, names: Object.keys(map) };
}

/** A YAML string: plain when it reads back as itself, double-quoted (JSON) otherwise. */
function yamlString(value: string): string {
  return /^[A-Za-z0-9_./-]+$/.test(value) && !value.startsWith('-') ? value : JSON.stringify(value);
}

/** The commented example rules: uncommented, they are the `rules` of the policy section. */
function exampleRules(server: string): string[] {
  const rows: [code: string, comment?: string][] = [
    ['rules:'],
    [`  - id: ${server}-read`, 'your name for it, shown in denials and audits'],
    ['    effect: allow', 'allow | deny (wins) | ask (a person approves)'],
    [`    resource: mcp:${server}:read_*`, 'tools: mcp:{server}:{tool}; * matches within a name'],
    ['    actions: execute'],
    [`  - id: ${server}-write-drafts`],
    ['    effect: allow'],
    [`    resource: mcp:${server}:write_note`],
    ['    actions: execute'],
    ['    when:', 'only with these arguments'],
    ['      args:'],
    ['        id: { startsWith: drafts/ }'],
    [`  - id: ${server}-docs`],
    ['    effect: allow'],
    [`    resource: mcp-resource:${server}:file:///docs/**`, 'resources: mcp-resource:{server}:{uri}'],
    ['    actions: read'],
    [`  - id: ${server}-prompts`],
    ['    effect: allow'],
    [`    resource: mcp-prompt:${server}:*`, 'prompts: mcp-prompt:{server}:{name}'],
    ['    actions: get'],
  ];
  const width = Math.max(...rows.filter((r) => r[1] !== undefined).map(([code]) => code.length)) + 2;
  return rows.map(([code, comment]) =>
    comment === undefined ? `#   ${code}` : `#   ${code.padEnd(width)}# ${comment}`,
  );
}

/** The project file `init` writes; `policy` replaces the empty policy (a template's `policy:` section). */
export function projectFileText(source: McpJson | undefined, policy?: readonly string[]): string {
  const renamed = (source?.names ?? []).filter((name) => safeName(name) !== name);
  const servers = source?.names.map(safeName) ?? [];
  const example = servers[0] ?? 'notes';
  const lines: string[] = [
    '# The Interlock project file, written by `interlock init`. Every command reads it from this folder',
    `# (or from --config FILE). \${VAR} and \${VAR:-default} are expanded from the environment.`,
    'version: 1',
    '',
  ];
  if (source === undefined) {
    lines.push(
      '# The MCP servers, in the shape Claude Desktop and .mcp.json use. For example:',
      '#   notes:',
      '#     command: node',
      '#     args: [notes-server.mjs]',
      '#   weather:',
      '#     type: http',
      '#     url: https://example.com/mcp',
      `#     headers: { Authorization: "Bearer \${WEATHER_TOKEN}" }`,
      'mcpServers: {}',
    );
  } else {
    lines.push(
      `# The servers of ${source.path} (${servers.join(', ') || 'none yet'}), read from it each time: edit them there.`,
      '# To add options to one, name it under mcpServers without command or url, e.g.',
      '#   mcpServers:',
      `#     ${example}:`,
      '#       timeoutMs: 10000',
      '#       tools: { deny: [delete_*] }   # never even shown to a model',
    );
    if (renamed.length === 0) {
      lines.push(`mcpConfig: ${yamlString(source.path)}`);
    } else {
      lines.push(
        '# Names Interlock cannot use (a dot, a space, __) get a new name here; rules use the new one.',
        'mcpConfig:',
        `  path: ${yamlString(source.path)}`,
        '  rename:',
        ...renamed.map((name) => `    ${JSON.stringify(name)}: ${yamlString(safeName(name))}`),
      );
    }
  }
  lines.push(
    '',
    ...(policy ?? [
      '# The policy: a call no rule allows is denied. There are no rules yet, so nothing is allowed:',
      '# `interlock tools` shows every tool denied, and `interlock tools <name>` the exact rule to add.',
      '# To allow, replace `rules: []` with a list of rules, e.g.',
      ...exampleRules(example),
      'policy:',
      '  version: 1',
      '  rules: []',
    ]),
    '',
    '# Tool definitions are pinned on first sight; a changed definition is blocked until approved.',
    'pins:',
    '  file: .interlock/pins.json',
    '# One record per decision (argument names, never their values).',
    'audit:',
    '  file: .interlock/audit.jsonl',
    '',
  );
  return lines.join('\n');
}
