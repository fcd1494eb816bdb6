/**
 * Loading the project file (issue 6, "Files"): find it, parse YAML or JSON, expand `${VAR}` and
 * `${VAR:-default}`, validate every part with its own schema, and collect every problem of the file in one
 * `ConfigError` that names the file, the field path, its line, what was expected and what was found.
 */
import { access, readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { z } from 'zod';
import { ConfigError, type ConfigIssue, PolicyError } from '../errors.js';
import { isJsonObject } from '../json.js';
import { CedarPolicy } from '../security/cedar/engine.js';
import { type Policy, policySchemas } from '../security/policy.js';
import type { recordingSchemas } from '../security/recording.js';
import { appendPath, parsePath, toConfigIssues } from '../zod-issues.js';
import { type ConfigDocument, readConfigDocument } from './document.js';
import { expandEnv, expanded } from './env.js';
import {
  closestKey,
  withoutConsequences as dedupe,
  explainIssue,
  type FileIssue,
  fileError,
  filesError,
} from './file-issues.js';
import type { GatewayConfig } from './gateway.js';
import { keysAt } from './keys.js';
import { parseMCPConfig } from './mcp-json.js';
import {
  type AuditConfigSchema,
  DEFAULT_AGENT,
  DEFAULT_CONFIG_FILES,
  DEFAULT_PINS_FILE,
  InterlockConfigSchema,
  ProjectFileShapeSchema,
  type StateConfigSchema,
} from './schema.js';
import { collectEntrySecrets } from './secrets.js';
import { expandHome, sectionSchemas, tlsPaths } from './sections.js';
import { type HttpConfig, type MCPServerConfig, type NetworkConfig, parseServerConfig } from './servers.js';

type Env = Readonly<Record<string, string | undefined>>;

/** The project file's `audit.record`, validated: where decisions are recorded and which argument values are kept. */
export type RecordingConfig = z.output<ReturnType<typeof recordingSchemas>['options']>;

/** The project file's `audit` section, validated. */
export type AuditConfig = z.output<typeof AuditConfigSchema>;

/** The project file's `state` section, validated. */
export type StateConfig = z.output<typeof StateConfigSchema>;

/** Options of {@link loadInterlockConfig}. */
export interface LoadInterlockConfigOptions {
  /** The project file, relative to `cwd`. @default the first of `DEFAULT_CONFIG_FILES` found in `cwd` */
  file?: string | undefined;
  /** Directory the file is looked for in and relative paths start from. @default process.cwd() */
  cwd?: string | undefined;
  /** Variables for `${VAR}` expansion. @default process.env */
  env?: Env | undefined;
}

/** A loaded, validated project file. Paths are absolute. */
export interface InterlockConfig {
  /** Absolute path of the project file. */
  readonly file: string;
  /** Every server (from `mcpServers` / `servers` and `mcpConfig`), defaults applied, variables expanded. */
  readonly servers: readonly MCPServerConfig[];
  /** The validated policy, or `undefined` when the file has none (every call is then denied). */
  readonly policy: Policy | undefined;
  /** Where the policy came from: the project file or its `policy.file`. */
  readonly policyFile: string | undefined;
  /**
   * A Cedar policy (`policy: { cedar }` or a `.cedar` `policy.file`) that decides instead of native rules, validated
   * against Interlock's Cedar schema; `policy` is then `undefined`.
   */
  readonly cedarPolicy: string | undefined;
  readonly pinsFile: string;
  readonly auditFile: string | undefined;
  /**
   * The decision recording (`audit.record`): its file absolute, its digest key expanded (and kept among `secrets`),
   * or `undefined` when nothing is recorded.
   */
  readonly recording: RecordingConfig | undefined;
  /** The audit section (`audit`): its sinks and chain settings, file paths absolute. */
  readonly audit: AuditConfig | undefined;
  readonly agent: string;
  /** The SSRF guard (`network`), or `undefined` for the default policy. */
  readonly network: NetworkConfig | undefined;
  /** The HTTP stack (`http`): proxy, certificates (file paths absolute), pooling. */
  readonly http: HttpConfig | undefined;
  /** Shared state (`state`): the Redis server quotas are counted in, or `undefined` to count in this process. */
  readonly state: StateConfig | undefined;
  /** `interlock serve` (`gateway`): who may call, which rules each caller gets, where HTTP listens. */
  readonly gateway: GatewayConfig | undefined;
  /**
   * Every value a variable puts anywhere in a server entry or a section, URL passwords, and literal values of
   * secret-looking `env` and `headers` keys.
   * Whatever prints anything derived from this config must mask them.
   */
  readonly secrets: readonly string[];
}

/** The first of `DEFAULT_CONFIG_FILES` that exists in `cwd`, as an absolute path. */
export function findConfigFile(cwd: string): Promise<string | undefined> {
  return firstExisting(DEFAULT_CONFIG_FILES.map((name) => join(cwd, name)));
}

/** The first of `paths` that exists, in order. */
export async function firstExisting(paths: readonly string[]): Promise<string | undefined> {
  for (const path of paths) {
    if (
      await access(path).then(
        () => true,
        () => false,
      )
    )
      return path;
  }
  return undefined;
}

/** A path for messages: relative to `cwd` when inside it. */
function shown(file: string, cwd: string): string {
  const rel = relative(cwd, file);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
}

/** Loads and validates the project file. Throws `ConfigError` (`INVALID_CONFIG`) listing every problem. */
export async function loadInterlockConfig(
  options: LoadInterlockConfigOptions = {},
): Promise<InterlockConfig> {
  const cwd = resolve(options.cwd ?? process.cwd());
  const env = options.env ?? process.env;
  const file =
    options.file === undefined ? await findConfigFile(cwd) : resolve(cwd, expandHome(options.file));
  if (file === undefined) {
    throw new ConfigError(
      `No project file in ${cwd}: create ${DEFAULT_CONFIG_FILES.join(', ')} there, or pass --config <file>.`,
      { issues: [{ path: '(file)', message: 'no project file found' }] },
    );
  }
  const loader = new Loader(cwd, env, await readConfigDocument(file, 'config file', shown(file, cwd)));
  return loader.load();
}

class Loader {
  /** Every problem found, in the project file and in the files it names, reported together at the end. */
  readonly #issues: FileIssue[] = [];
  /** What each file with problems is ("MCP config", "policy file"), by its name in messages. */
  readonly #kinds = new Map<string, string>();
  readonly #dir: string;
  readonly #secrets = new Set<string>();
  /** Keeps the secrets of one server entry as written. */
  readonly #collect = (entry: unknown): void => collectEntrySecrets(entry, this.env, this.#secrets);

  constructor(
    readonly cwd: string,
    readonly env: Env,
    readonly doc: ConfigDocument,
  ) {
    this.#dir = dirname(doc.path);
    this.#kinds.set(doc.file, 'config file');
  }

  /** Explains issues of `doc` (whose fields `shape` describes) and keeps them, marked with their file. */
  #add(
    issues: readonly ConfigIssue[],
    doc: ConfigDocument = this.doc,
    shape: z.ZodType = InterlockConfigSchema,
  ): void {
    for (const issue of issues) {
      const explained = explainIssue(issue, doc, (path) => keysAt(shape, path));
      this.#issues.push(doc === this.doc ? explained : { file: doc.file, ...explained });
    }
  }

  /** Reads a file the project file names; a missing or unparsable file becomes an issue of that file. */
  async #read(path: string, what: string): Promise<ConfigDocument | undefined> {
    const file = shown(path, this.cwd);
    this.#kinds.set(file, what);
    try {
      return await readConfigDocument(path, what, file);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      this.#issues.push(...err.issues.map((issue) => ({ file, ...issue })));
      return undefined;
    }
  }

  /** Expands variables in one string field; a problem becomes an issue and the result `undefined`. */
  #string(value: unknown, path: string): string | undefined {
    if (typeof value !== 'string') return undefined;
    const issues: ConfigIssue[] = [];
    const out = expandEnv(value, { env: this.env }, path, issues) as string;
    this.#add(issues);
    return issues.length > 0 ? undefined : out;
  }

  #path(value: unknown, path: string, from = this.#dir): string | undefined {
    const expanded = this.#string(value, path);
    return expanded === undefined ? undefined : resolve(from, expandHome(expanded));
  }

  async load(): Promise<InterlockConfig> {
    const data = this.doc.data;
    if (!isJsonObject(data)) {
      const found = data === null || data === undefined ? 'an empty file' : `a ${typeof data}`;
      throw fileError('config file', this.doc.file, [
        { path: '(root)', message: `expected an object with mcpServers, policy, ...; found ${found}` },
      ]);
    }
    const top = ProjectFileShapeSchema.safeParse(data);
    if (!top.success) this.#add(toConfigIssues(top.error));

    const servers = await this.#servers(data);
    const { policy, policyFile, cedarPolicy } = await this.#policy(data.policy);
    const pins = isJsonObject(data.pins) ? data.pins : {};
    const pinsFile =
      this.#path(pins.file ?? DEFAULT_PINS_FILE, 'pins.file') ?? resolve(this.#dir, DEFAULT_PINS_FILE);
    const agent =
      data.agent === undefined ? DEFAULT_AGENT : (this.#string(data.agent, 'agent') ?? DEFAULT_AGENT);
    const sections = sectionSchemas({ env: this.env, dir: this.#dir, secrets: this.#secrets });
    const network = this.#section(data.network, 'network', sections.network);
    const state = this.#section(data.state, 'state', sections.state);
    const gateway = this.#section(data.gateway, 'gateway', sections.gateway);
    const http = this.#section(data.http, 'http', sections.http);
    const audit = this.#section(data.audit, 'audit', sections.audit);
    const recording = this.#recording(audit?.record);
    if (audit?.stream !== undefined && data.state === undefined) {
      this.#add([{ path: 'audit.stream', message: 'a Redis stream needs state.redis' }]);
    }

    if (this.#issues.length > 0) throw filesError(this.doc.file, this.#kinds, dedupe(this.#issues));
    return Object.freeze({
      file: this.doc.path,
      servers: Object.freeze(servers),
      policy,
      policyFile,
      cedarPolicy,
      pinsFile,
      auditFile: audit?.file,
      recording,
      audit,
      agent,
      network,
      http,
      state,
      gateway,
      secrets: Object.freeze([...this.#secrets]),
    });
  }

  /** `audit.record`: validated, `${VAR}` expanded (the digest key is a secret), its file relative to this file. */
  /** `audit.record`, validated with the audit section: its digest key joins the secrets, its file is absolute. */
  #recording(record: RecordingConfig | undefined): RecordingConfig | undefined {
    if (record === undefined) return undefined;
    if (record.digestKey !== undefined) this.#secrets.add(record.digestKey);
    return Object.freeze({ ...record, file: resolve(this.#dir, expandHome(record.file)) });
  }

  /** A top-level section, loaded by its schema (see `sectionSchemas`); its problems become issues. */
  #section<T>(value: unknown, path: string, schema: z.ZodType<T>): T | undefined {
    if (value === undefined) return undefined;
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    this.#add(toConfigIssues(parsed.error, path));
    return undefined;
  }

  // ---- servers ------------------------------------------------------------------------------------------

  async #servers(data: Record<string, unknown>): Promise<MCPServerConfig[]> {
    if (data.mcpServers !== undefined && data.servers !== undefined) {
      this.#add([{ path: 'servers', message: 'use either mcpServers or servers (VS Code), not both' }]);
    }
    const key =
      data.mcpServers !== undefined ? 'mcpServers' : data.servers !== undefined ? 'servers' : undefined;
    const inline = key === undefined ? {} : data[key];
    if (key === undefined && data.mcpConfig === undefined) {
      this.#add([
        {
          path: 'mcpServers',
          message: 'no servers: add mcpServers (or servers), or point mcpConfig at an mcp.json',
        },
      ]);
    }
    const base = await this.#mcpConfig(data.mcpConfig);
    if (!isJsonObject(inline)) return base.servers;
    const baseByName = new Map(base.servers.map((c) => [c.name, c]));
    const full: Record<string, unknown> = {};
    const configs: MCPServerConfig[] = [...base.servers];
    const prefix = key ?? 'mcpServers';
    for (const [name, entry] of Object.entries(inline)) {
      const previous = baseByName.get(name);
      if (previous === undefined) {
        // Options for a server of an mcp.json that failed to load: its problems are reported already.
        const optionsOnly = isJsonObject(entry) && entry.command === undefined && entry.url === undefined;
        if (optionsOnly && base.failed && (base.names?.has(name) ?? true)) continue;
        full[name] = entry;
        continue;
      }
      const index = configs.indexOf(previous);
      const merged = this.#overlay(previous, entry, appendPath(prefix, name));
      if (merged !== undefined) configs[index] = merged;
    }
    try {
      const parsed = parseMCPConfig(
        { [prefix]: full },
        { env: this.env, file: this.doc.file, collect: this.#collect },
      );
      configs.push(...parsed.map((c) => withCwd(c, this.#dir)));
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      this.#add(err.issues.map((issue) => nameIssue(issue, prefix)));
    }
    return configs;
  }

  /**
   * Servers of the `mcpConfig` file (a path, or `{ path, rename }`), renamed as asked. Its problems are issues
   * of that file; `failed` says there were some.
   */
  async #mcpConfig(
    value: unknown,
  ): Promise<{ servers: MCPServerConfig[]; failed: boolean; names?: ReadonlySet<string> }> {
    const none = { servers: [], failed: false };
    if (value === undefined) return none;
    const ref = isJsonObject(value) ? value : { path: value };
    const path = this.#path(ref.path, isJsonObject(value) ? 'mcpConfig.path' : 'mcpConfig');
    if (path === undefined) return none;
    const rename = isJsonObject(ref.rename) ? (ref.rename as Record<string, unknown>) : {};
    const safe = Object.fromEntries(
      Object.entries(rename).filter((e): e is [string, string] => typeof e[1] === 'string'),
    );
    const doc = await this.#read(path, 'MCP config');
    if (doc === undefined) return { servers: [], failed: true };
    const map = isJsonObject(doc.data) ? (doc.data.mcpServers ?? doc.data.servers) : undefined;
    if (isJsonObject(map)) {
      const names = Object.keys(map);
      for (const written of Object.keys(rename).filter((n) => !Object.hasOwn(map, n))) {
        const near = closestKey(written, names);
        this.#add([
          {
            path: appendPath('mcpConfig.rename', written),
            message: `${doc.file} has no server ${JSON.stringify(written)}${near === undefined ? '' : ` (did you mean ${JSON.stringify(near)}?)`}`,
          },
        ]);
      }
    }
    try {
      const servers = parseMCPConfig(doc.data, {
        env: this.env,
        file: doc.file,
        rename: safe,
        collect: this.#collect,
      });
      return { servers: servers.map((c) => withCwd(c, dirname(path))), failed: false };
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      const prefix = isJsonObject(doc.data) && doc.data.mcpServers === undefined ? 'servers' : 'mcpServers';
      const written = typeof ref.path === 'string' ? ref.path : doc.file;
      const renamed = (issue: ConfigIssue) => {
        const at = parsePath(issue.path);
        return at.length === 3 && at[2] === 'name' && Object.hasOwn(rename, String(at[1]));
      };
      // A bad new name is reported at mcpConfig.rename in the project file, by the project file's schema.
      const issues = err.issues
        .filter((i) => !renamed(i))
        .map((i) => nameIssue(i, prefix, { file: this.doc.file, path: written }));
      this.#add(issues, doc);
      const names = isJsonObject(map) ? Object.keys(map).map((n) => safe[n] ?? n) : [];
      return { servers: [], failed: true, names: new Set(names) };
    }
  }

  /** Options in the project file for a server that `mcpConfig` defines: merged over it, field by field. */
  #overlay(base: MCPServerConfig, entry: unknown, path: string): MCPServerConfig | undefined {
    if (!isJsonObject(entry)) {
      this.#add([{ path, message: 'expected an object of options for this server' }]);
      return undefined;
    }
    if (entry.command !== undefined || entry.url !== undefined) {
      this.#add([
        {
          path,
          message: `server '${base.name}' is also defined in mcpConfig; remove one, or leave out command and url here to only add options to it`,
        },
      ]);
      return undefined;
    }
    if (entry.type !== undefined) {
      this.#add([
        { path: `${path}.type`, message: "set the transport of a server from mcpConfig with 'transport'" },
      ]);
      return undefined;
    }
    this.#collect(entry);
    const issues: ConfigIssue[] = [];
    const { disabled, ...rest } = expandEnv(entry, { env: this.env }, path, issues) as Record<
      string,
      unknown
    >;
    if (issues.length > 0) {
      this.#add(issues);
      return undefined;
    }
    const merged: Record<string, unknown> = { ...base, ...rest, name: base.name };
    for (const field of ['env', 'headers'] as const) {
      const mine = (base as Record<string, unknown>)[field];
      if (isJsonObject(mine) && isJsonObject(rest[field])) merged[field] = { ...mine, ...rest[field] };
    }
    if (disabled !== undefined) merged.enabled = disabled !== true;
    if (typeof rest.cwd === 'string') merged.cwd = resolve(this.#dir, rest.cwd);
    try {
      const config = parseServerConfig(merged);
      // Certificate files named here are relative to this file (those of the mcp.json are absolute by now).
      return rest.tls === undefined || config.transport === 'stdio' || config.tls === undefined
        ? config
        : { ...config, tls: tlsPaths(config.tls, this.#dir) };
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      this.#add(err.issues.map((i) => ({ path: `${path}.${i.path}`, message: i.message })));
      return undefined;
    }
  }

  // ---- policy -------------------------------------------------------------------------------------------

  async #policy(value: unknown): Promise<LoadedPolicy> {
    const none: LoadedPolicy = { policy: undefined, policyFile: undefined, cedarPolicy: undefined };
    if (value === undefined) return none;
    const projectFile = this.doc.path;
    if (
      isJsonObject(value) &&
      value.cedar !== undefined &&
      value.rules === undefined &&
      value.version === undefined
    ) {
      const extra = Object.keys(value).filter((k) => k !== 'cedar');
      if (extra.length > 0) {
        this.#add([{ path: 'policy', message: `unknown field(s) ${extra.map((k) => `'${k}'`).join(', ')}` }]);
      }
      if (typeof value.cedar !== 'string') {
        this.#add([{ path: 'policy.cedar', message: 'expected the text of a Cedar policy' }]);
        return none;
      }
      const checked = cedarProblem(value.cedar);
      if (checked !== undefined) {
        this.#add([{ path: 'policy.cedar', message: checked }]);
        return none;
      }
      return { policy: undefined, policyFile: projectFile, cedarPolicy: value.cedar };
    }
    if (
      isJsonObject(value) &&
      value.file !== undefined &&
      value.rules === undefined &&
      value.version === undefined
    ) {
      const extra = Object.keys(value).filter((k) => k !== 'file');
      if (extra.length > 0) {
        this.#add([{ path: 'policy', message: `unknown field(s) ${extra.map((k) => `'${k}'`).join(', ')}` }]);
      }
      const path = this.#path(value.file, 'policy.file');
      if (path === undefined) {
        if (typeof value.file !== 'string')
          this.#add([{ path: 'policy.file', message: 'expected a file path' }]);
        return none;
      }
      if (path.endsWith('.cedar')) return this.#cedarFile(path);
      const doc = await this.#read(path, 'policy file');
      if (doc === undefined) return none;
      const loaded = loadPolicy(doc.data, this.env, '');
      if (loaded.policy === undefined) {
        this.#add(loaded.issues, doc, policySchemas().policy);
        return none;
      }
      return { policy: loaded.policy, policyFile: path, cedarPolicy: undefined };
    }
    const { policy, issues } = loadPolicy(value, this.env, 'policy');
    this.#add(issues);
    return { policy, policyFile: policy === undefined ? undefined : projectFile, cedarPolicy: undefined };
  }

  /** A `.cedar` policy file: its text, validated against Interlock's Cedar schema (issue 40). */
  async #cedarFile(path: string): Promise<LoadedPolicy> {
    const file = shown(path, this.cwd);
    this.#kinds.set(file, 'Cedar policy file');
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'the file does not exist' : String(err);
      this.#issues.push({ file, path: '(file)', message: why });
      return { policy: undefined, policyFile: undefined, cedarPolicy: undefined };
    }
    const checked = cedarProblem(text);
    if (checked !== undefined) {
      this.#issues.push({ file, path: '(root)', message: checked });
      return { policy: undefined, policyFile: undefined, cedarPolicy: undefined };
    }
    return { policy: undefined, policyFile: path, cedarPolicy: text };
  }
}

/** What `#policy` found: a native policy, a Cedar one, or neither. */
interface LoadedPolicy {
  policy: Policy | undefined;
  policyFile: string | undefined;
  cedarPolicy: string | undefined;
}

/** Cedar's own message when `text` does not parse or type-check against Interlock's schema, else undefined. */
function cedarProblem(text: string): string | undefined {
  try {
    new CedarPolicy(text);
    return undefined;
  } catch (err) {
    if (!(err instanceof PolicyError)) throw err;
    return err.message;
  }
}

/**
 * A policy as written, loaded by its schema behind `${VAR}` expansion: the schema checks everything a capability
 * set would (patterns, actions, regular expressions), so what it accepts loads. Issues start at `prefix`.
 */
function loadPolicy(
  value: unknown,
  env: Env,
  prefix: string,
): { policy: Policy | undefined; issues: ConfigIssue[] } {
  const result = expanded(policySchemas().policy, { env }).safeParse(value);
  return result.success
    ? { policy: result.data, issues: [] }
    : { policy: undefined, issues: toConfigIssues(result.error, prefix) };
}

/**
 * Relative paths start at the directory of the file that defines the server: a stdio server's `cwd` (which
 * defaults to that directory) and a remote server's certificate files.
 */
function withCwd(config: MCPServerConfig, dir: string): MCPServerConfig {
  if (config.transport !== 'stdio')
    return config.tls === undefined ? config : { ...config, tls: tlsPaths(config.tls, dir) };
  return { ...config, cwd: resolve(dir, config.cwd ?? '.') };
}

/**
 * An issue on a server's `name` is about the key the server is listed under. For a server of an mcp.json
 * (`mapTo`), the fix is a new name in the project file rather than an edit of a file other clients read.
 */
function nameIssue(issue: ConfigIssue, prefix: string, mapTo?: { file: string; path: string }): ConfigIssue {
  const path = parsePath(issue.path);
  if (path.length === 3 && path[0] === prefix && path[2] === 'name') {
    const written = String(path[1]);
    let message = `the server name ${JSON.stringify(written)} ${issue.message}`;
    if (mapTo !== undefined) {
      const rename = `{ ${JSON.stringify(written)}: ${JSON.stringify(safeName(written))} }`;
      message += `; give it a safe name in ${mapTo.file}: mcpConfig: { path: ${JSON.stringify(mapTo.path)}, rename: ${rename} }`;
    }
    return { path: appendPath(prefix, written), message };
  }
  return issue;
}

/**
 * Reads a policy file (JSON or YAML, `${VAR}` expanded) and validates it: throws `ConfigError` listing every
 * problem with its line.
 */
export async function loadPolicyFile(
  path: string,
  options: { env?: Readonly<Record<string, string | undefined>> } = {},
): Promise<Policy> {
  const doc = await readConfigDocument(path, 'policy file');
  const { policy, issues } = loadPolicy(doc.data, options.env ?? process.env, '');
  if (policy === undefined) {
    const explained = issues.map((i) => explainIssue(i, doc, (p) => keysAt(policySchemas().policy, p)));
    throw fileError('policy file', doc.file, dedupe(explained));
  }
  return policy;
}

/** A name close to `name` that is a valid server name: other characters become `_`, no `__`, at most 40. */
export function safeName(name: string): string {
  const out = name
    .replace(/[^A-Za-z0-9_-]/g, '_')
    .replace(/_{2,}/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 40)
    .replace(/_+$/, '');
  return out === '' ? 'server' : out;
}
