/**
 * Where labels come from (issue 42): the labels of a target (a tool, resource, prompt or skill), resolved from the
 * policy's `labels` section, the project file's per-server `labels` and `sink`, and defaults derived from a tool's
 * annotations. Two kinds: **content** labels are what a target's results carry into the session (recorded in its
 * `FlowState`); **sink** labels are what it is as a destination (`egress`, `write`, `destructive`), never recorded.
 * The labels a flow condition sees for the target (`context.labels`) are both.
 *
 * Annotations are a server's own, untrusted, claims: they can only add labels (a server that lies cannot remove a
 * label the operator declared), and an absent hint takes the MCP default (readOnlyHint false, destructiveHint true,
 * openWorldHint true), so a tool that says nothing gets every label a hint could have given it.
 */
import { z } from 'zod';
import { ConfigError, PolicyError } from '../errors.js';
import { once } from '../lazy.js';
import { describeIssues, toConfigIssues } from '../zod-issues.js';
import { FlowState, type FlowStateOptions, flowStateOptionShape } from './flow.js';
import { type CompiledPattern, compilePattern, MAX_PATTERN_LENGTH, matchPattern } from './pattern.js';
import type { ToolHints } from './types.js';

/** A label name: 1-64 characters of `A-Z a-z 0-9 _ . -`. */
export const LABEL_NAME_RE = /^[A-Za-z0-9_.-]{1,64}$/;
/** What a label name may be, said the same way everywhere. */
export const LABEL_NAME_MESSAGE = 'a label is 1-64 characters of A-Z a-z 0-9 _ . -';
/** Most labels one list may hold. */
export const MAX_LABELS = 64;
/** Most entries a policy's `labels` section may hold. */
export const MAX_LABEL_ENTRIES = 10_000;
/** Targets whose labels one {@link FlowLabels} remembers; past it the cache starts over. */
export const FLOW_LABELS_CACHE_SIZE = 4096;

/** The label schemas, built on first use (importing the security area builds no schema: issue 15). */
export const flowLabelSchemas = once(buildFlowLabelSchemas);

function buildFlowLabelSchemas() {
  const label = z.string().regex(LABEL_NAME_RE, { message: LABEL_NAME_MESSAGE });
  const list = (what: string) => z.array(label).min(1).max(MAX_LABELS).optional().describe(what);

  /** One entry of a policy's `labels` section. */
  const entry = z
    .strictObject({
      resource: z
        .string()
        .min(1)
        .max(MAX_PATTERN_LENGTH)
        .superRefine((pattern, ctx) => {
          try {
            compilePattern(pattern);
          } catch (err) {
            ctx.addIssue({ code: 'custom', message: err instanceof Error ? err.message : String(err) });
          }
        })
        .describe(
          'The targets labeled: a resource pattern, as in a rule (`mcp:mail:read_*`, `mcp-resource:docs:**`, `mcp-prompt:*:*`, `tool:*`).',
        ),
      labels: list(
        'Content labels: what the results of these targets carry into the session (`private`, `untrusted`).',
      ),
      sink: list(
        'Sink labels: what these targets are as destinations (`egress`, `write`); never recorded into the session.',
      ),
      hints: z
        .boolean()
        .optional()
        .describe(
          "false: derive no labels from these targets' annotations (the labels given here and the project file's still apply).",
        ),
    })
    .refine((e) => e.labels !== undefined || e.sink !== undefined || e.hints !== undefined, {
      message: 'a labels entry needs labels, sink or hints',
    })
    .describe('Labels of the targets a resource pattern matches.');

  const entries = z
    .array(entry)
    .max(MAX_LABEL_ENTRIES)
    .describe(
      'Labels of tools, resources, prompts and skills, by resource pattern: every matching entry applies.',
    );

  /** A policy's `flow` section: how provenance is indexed, and whether hints give labels. */
  const settings = z
    .strictObject({
      ...flowStateOptionShape(),
      hints: z
        .boolean()
        .optional()
        .describe(
          "Derive labels from tools' annotations (openWorldHint, readOnlyHint, destructiveHint). Default true.",
        ),
    })
    .describe('Information flow settings: provenance indexing and labels from tool annotations.');

  /** A server's labels in the project file. */
  const server = {
    labels: list(
      'Content labels of everything this server returns (tool results, resources, prompts, skills): `private`, `tenant-a`.',
    ),
    sink: list('Sink labels of all its tools: what they are as destinations (`egress`, `write`).'),
  };

  const serverSchema = z.strictObject(server);
  return {
    label,
    entry,
    entries,
    settings,
    server: serverSchema,
    serverShape: server,
    /** What {@link FlowLabels} is built from: the policy's sections, and the servers' labels. */
    policyPart: z.strictObject({ labels: entries.optional(), flow: settings.optional() }),
    serversPart: z.record(z.string(), serverSchema.optional()).optional(),
  };
}

type Schemas = ReturnType<typeof buildFlowLabelSchemas>;
/** One entry of a policy's `labels` section. */
export type LabelEntry = z.output<Schemas['entry']>;
/** A policy's `flow` section. */
export type FlowSettings = z.output<Schemas['settings']>;
/** A server's `labels` and `sink` in the project file. */
export interface ServerLabels {
  readonly labels?: readonly string[] | undefined;
  readonly sink?: readonly string[] | undefined;
}

/** Options of {@link FlowLabels}. */
export interface FlowLabelsOptions {
  /** The policy's `labels` section. @default none */
  labels?: readonly LabelEntry[] | undefined;
  /** The policy's `flow` section. @default all defaults */
  flow?: FlowSettings | undefined;
  /** The project file's servers' `labels` and `sink`, by server name. @default none */
  servers?: Readonly<Record<string, ServerLabels | undefined>> | undefined;
}

/** The labels of one target. */
export interface TargetLabels {
  /** What its results carry into the session (record them with these). */
  readonly content: readonly string[];
  /** What it is as a destination; never recorded. */
  readonly sink: readonly string[];
  /** Both, sorted: what `context.labels` and the `flow.target` condition see. */
  readonly all: readonly string[];
}

const HINT_KEYS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;
const NO_LABELS: readonly string[] = Object.freeze([]);
const SCHEMES_WITH_SERVER = new Set(['mcp', 'mcp-resource', 'mcp-prompt']);

interface CompiledEntry {
  readonly pattern: CompiledPattern;
  readonly labels: readonly string[];
  readonly sink: readonly string[];
  readonly hints: boolean | undefined;
}

/**
 * Resolves the labels of targets (CONTRACT 2 of issue 42): every policy entry whose pattern matches, the server's
 * labels from the project file, and the annotation defaults (unless `hints` is off for the target or everywhere).
 * Answers are cached per resource and annotations. Immutable: a new policy or project file makes a new one.
 */
export class FlowLabels {
  readonly #entries: readonly CompiledEntry[];
  readonly #servers: ReadonlyMap<string, ServerLabels>;
  readonly #options: FlowLabelsOptions;
  readonly #cache = new Map<string, TargetLabels>();
  /** Whether labels are derived from annotations where no entry turns it off. */
  readonly hints: boolean;
  /** The options of every session's {@link FlowState} under these settings. */
  readonly flowOptions: Readonly<FlowStateOptions>;

  /**
   * Throws `PolicyError` (`INVALID_POLICY`) naming the entry and field of a bad `labels` or `flow` part, and
   * `ConfigError` (`INVALID_CONFIG`) naming the server and field of a bad server part.
   */
  constructor(options: FlowLabelsOptions = {}) {
    const s = flowLabelSchemas();
    const policy = s.policyPart.safeParse({ labels: options.labels, flow: options.flow });
    if (!policy.success) {
      const issues = toConfigIssues(policy.error);
      throw new PolicyError(`Invalid policy: ${describeIssues(issues)}.`, { cause: policy.error });
    }
    const servers = s.serversPart.safeParse(options.servers);
    if (!servers.success) {
      const issues = toConfigIssues(servers.error, 'mcpServers');
      throw new ConfigError(`Invalid server labels: ${describeIssues(issues)}.`, {
        issues,
        cause: servers.error,
      });
    }
    this.#options = options;
    this.#entries = (policy.data.labels ?? []).map((e) => ({
      pattern: compilePattern(e.resource),
      labels: e.labels ?? NO_LABELS,
      sink: e.sink ?? NO_LABELS,
      hints: e.hints,
    }));
    const map = new Map<string, ServerLabels>();
    for (const [name, labels] of Object.entries(servers.data ?? {})) {
      if (labels !== undefined && (labels.labels !== undefined || labels.sink !== undefined))
        map.set(name, labels);
    }
    this.#servers = map;
    const flow = policy.data.flow ?? {};
    this.hints = flow.hints ?? true;
    this.flowOptions = Object.freeze({
      minFragmentLength: flow.minFragmentLength,
      windowSize: flow.windowSize,
      maxIndexedChars: flow.maxIndexedChars,
    });
  }

  /** The same policy labels with these servers' labels (the project file's `mcpServers.{name}.labels` and `sink`). */
  withServers(servers: Readonly<Record<string, ServerLabels | undefined>>): FlowLabels {
    return new FlowLabels({ ...this.#options, servers });
  }

  /** A new session's flow state, with the policy's `flow` settings. */
  createFlowState(): FlowState {
    return new FlowState(this.flowOptions);
  }

  /**
   * The labels of `resource` (`mcp:mail:read_inbox`, `mcp-resource:docs:file:///a`, `mcp-prompt:x:y`,
   * `mcp:srv:skill:name`, `tool:fetch`). A tool (`mcp:{server}:{tool}` or `tool:{name}`) gets the annotation defaults
   * too; `annotations` are its (untrusted) hints, absent ones taking the MCP defaults.
   */
  labelsFor(resource: string, annotations?: ToolHints): TargetLabels {
    const key = `${resource}\u0000${hintsKey(annotations)}`;
    const cached = this.#cache.get(key);
    if (cached !== undefined) return cached;
    const labels = this.#resolve(resource, annotations);
    if (this.#cache.size >= FLOW_LABELS_CACHE_SIZE) this.#cache.clear();
    this.#cache.set(key, labels);
    return labels;
  }

  #resolve(resource: string, annotations: ToolHints | undefined): TargetLabels {
    const content = new Set<string>();
    const sink = new Set<string>();
    let hints: boolean | undefined;
    for (const e of this.#entries) {
      if (!matchPattern(e.pattern, resource)) continue;
      for (const l of e.labels) content.add(l);
      for (const l of e.sink) sink.add(l);
      // An entry that turns hints off wins over one that turns them on.
      if (e.hints !== undefined) hints = hints === false ? false : e.hints;
    }
    const parts = resource.split(':');
    const scheme = parts[0] ?? '';
    const server = SCHEMES_WITH_SERVER.has(scheme) ? this.#servers.get(parts[1] ?? '') : undefined;
    for (const l of server?.labels ?? NO_LABELS) content.add(l);
    if (scheme === 'mcp') for (const l of server?.sink ?? NO_LABELS) sink.add(l);
    const tool = (scheme === 'mcp' && parts.length === 3) || scheme === 'tool';
    if (tool && (hints ?? this.hints)) {
      // MCP 2025-11-25 ToolAnnotations: readOnlyHint false, destructiveHint true, openWorldHint true when absent.
      const readOnly = hint(annotations, 'readOnlyHint') ?? false;
      const openWorld = hint(annotations, 'openWorldHint') ?? true;
      const destructive = hint(annotations, 'destructiveHint') ?? true;
      if (openWorld) content.add('untrusted');
      if (!readOnly) {
        sink.add('write');
        if (openWorld) sink.add('egress');
        if (destructive) sink.add('destructive');
      }
    }
    const c = Object.freeze([...content].sort());
    const s = Object.freeze([...sink].sort());
    return Object.freeze({ content: c, sink: s, all: Object.freeze([...new Set([...c, ...s])].sort()) });
  }
}

/** The `servers` of {@link FlowLabelsOptions} from server configs (the project file's `mcpServers`). */
export function serverLabelsOf(
  servers: readonly (ServerLabels & { readonly name: string })[],
): Record<string, ServerLabels> {
  const out: Record<string, ServerLabels> = {};
  for (const s of servers) {
    if (s.labels !== undefined || s.sink !== undefined) out[s.name] = { labels: s.labels, sink: s.sink };
  }
  return out;
}

/** A hint's value when it is a boolean; anything else counts as absent. */
function hint(annotations: ToolHints | undefined, key: (typeof HINT_KEYS)[number]): boolean | undefined {
  if (annotations === undefined || annotations === null || !Object.hasOwn(annotations, key)) return undefined;
  const v: unknown = annotations[key];
  return typeof v === 'boolean' ? v : undefined;
}

/** The annotations as a short cache key: one character per hint (t, f, or - when absent). */
function hintsKey(annotations: ToolHints | undefined): string {
  let key = '';
  for (const k of HINT_KEYS) {
    const v = hint(annotations, k);
    key += v === undefined ? '-' : v ? 't' : 'f';
  }
  return key;
}
