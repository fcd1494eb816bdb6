/**
 * The decision recording (issue 40, "replay before rollout"): an opt-in audit sink that keeps each decision's
 * inputs — principal, agent, resource, action, server, tool, definition hash, annotations, time, arguments, and the
 * labels of the target and of the session (issue 42, names only) — and the decision made, one JSON line each, so
 * `interlock policy diff` can decide them again under a new policy.
 *
 * Argument values are kept only where the operator allows it (`keep`: argument names per resource pattern); every
 * other value is recorded as its JSON type and a keyed digest, HMAC-SHA-256 under a key that is never written to
 * the file (`digestKey`, or a random key per recorder). A plain or salted hash of a short value (`yes`, a PIN, a
 * user id) is broken by trying every candidate; a keyed one cannot be checked without the key. An argument whose
 * name looks like a secret is never kept, and a kept value that holds a known secret value or a secret-named field
 * is recorded as a digest instead: a recorded value is either exactly what the call sent, or not there at all.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { once } from '../lazy.js';
import { createMasker, SECRET_NAME } from '../redact.js';
import { JsonLinesFile } from './audit.js';
import { compilePattern, MAX_PATTERN_LENGTH, matchPattern } from './pattern.js';
import type { AccessRequest, AuditRecord, AuditSink, DecisionEffect, ToolHints } from './types.js';

/** The format version of a recorded decision (`v` on each line). */
export const RECORDING_VERSION = 1;
/** Shortest `digestKey`: 32 characters, about as much as 128 random bits written in base64. */
export const MIN_DIGEST_KEY_LENGTH = 32;

/** The recording's schemas, built on first use (importing the security area builds no schema: issue 15). */
export const recordingSchemas = once(buildRecordingSchemas);

function buildRecordingSchemas() {
  const keep = z
    .strictObject({
      resource: z
        .string()
        .min(1)
        .max(MAX_PATTERN_LENGTH)
        .describe('A resource pattern, as in a policy rule: `mcp:notes:write_note`, `mcp:notes:*`.'),
      args: z
        .array(z.string().min(1).max(256))
        .min(1)
        .max(256)
        .describe(
          'The arguments whose values are kept for calls to that resource. A name that looks like a secret (token, key, password, ...) is never kept.',
        ),
    })
    .superRefine((entry, ctx) => {
      try {
        compilePattern(entry.resource);
      } catch (err) {
        ctx.addIssue({ code: 'custom', path: ['resource'], message: (err as Error).message });
      }
    })
    .describe('Argument values kept for one resource pattern.');

  const options = z
    .strictObject({
      file: z.string().min(1, 'must not be empty').describe('JSON-lines file the decisions are appended to.'),
      keep: z
        .array(keep)
        .max(1000)
        .optional()
        .describe(
          'Where argument values are kept, by resource pattern and argument name. Every other value is recorded as its type and a keyed digest. Default: none kept.',
        ),
      digestKey: z
        .string()
        .min(MIN_DIGEST_KEY_LENGTH, `a digest key has at least ${MIN_DIGEST_KEY_LENGTH} characters`)
        .optional()
        .describe(
          'The key of the argument digests (HMAC-SHA-256); write it as a variable reference and keep it out of the file. The same key makes equal values have equal digests across processes and restarts. Default: a random key per process, never written anywhere.',
        ),
    })
    .describe(
      "Record each decision's inputs and outcome, for `interlock policy diff --against FILE` before a policy rollout.",
    );

  const hints = z
    .object({
      readOnlyHint: z.boolean().optional(),
      destructiveHint: z.boolean().optional(),
      idempotentHint: z.boolean().optional(),
      openWorldHint: z.boolean().optional(),
    })
    .partial();

  const value = z.union([
    z.strictObject({ value: z.unknown() }),
    z.strictObject({
      type: z.enum(['string', 'number', 'boolean', 'null', 'array', 'object']),
      digest: z.string().regex(/^hmac-sha256:[0-9a-f]{64}$/),
    }),
  ]);

  const effect = z.enum(['allow', 'deny', 'ask', 'default-deny']);
  const line = z.object({
    v: z.literal(RECORDING_VERSION),
    time: z.iso.datetime(),
    agent: z.string().optional(),
    principal: z.string().optional(),
    resource: z.string().min(1),
    action: z.string().min(1),
    server: z.string().optional(),
    tool: z.string().optional(),
    definitionHash: z.string().optional(),
    annotations: hints.optional(),
    labels: z.array(z.string()).optional(),
    flow: z.object({ labels: z.array(z.string()) }).optional(),
    args: z.record(z.string(), value).optional(),
    keyId: z.string(),
    decision: z.object({
      effect,
      allowed: z.boolean(),
      ruleId: z.string().optional(),
      approved: z.boolean().optional(),
      policyRevision: z.string().optional(),
    }),
  });
  return { options, line };
}

/** Options of a {@link DecisionRecorder}; also the project file's `audit.record`. */
export type DecisionRecorderOptions = z.input<ReturnType<typeof recordingSchemas>['options']> & {
  /** Known secret values (a project's `${VAR}` values): a kept value holding one is digested instead. */
  secrets?: readonly string[] | undefined;
  /** File mode when the file is created. @default 0o600 */
  mode?: number | undefined;
};

/** One recorded argument: its exact value (kept), or its JSON type and keyed digest. */
export type RecordedValue = { readonly value: unknown } | { readonly type: string; readonly digest: string };

/** One line of a recording. */
export interface RecordedDecision {
  readonly v: typeof RECORDING_VERSION;
  readonly time: string;
  readonly agent?: string | undefined;
  readonly principal?: string | undefined;
  readonly resource: string;
  readonly action: string;
  readonly server?: string | undefined;
  readonly tool?: string | undefined;
  readonly definitionHash?: string | undefined;
  readonly annotations?: ToolHints | undefined;
  /** The target's labels (issue 42), when the call's context had them. */
  readonly labels?: readonly string[] | undefined;
  /**
   * The labels the session had seen (issue 42), when the call had a flow state: names only. What the arguments
   * carried is not recorded (it would need the session's fingerprints), so a replayed `carries` condition is decided
   * only when the session had none of its labels.
   */
  readonly flow?: { readonly labels: readonly string[] } | undefined;
  /** Absent when the call had no arguments object. */
  readonly args?: Readonly<Record<string, RecordedValue>> | undefined;
  /** Names the digest key (an HMAC of a fixed text): equal digests compare only under the same `keyId`. */
  readonly keyId: string;
  readonly decision: {
    /** The final effect: `allow` when an `ask` was approved. */
    readonly effect: DecisionEffect;
    readonly allowed: boolean;
    readonly ruleId?: string | undefined;
    /** Set when an `ask` rule decided and the approver answered. */
    readonly approved?: boolean | undefined;
    readonly policyRevision?: string | undefined;
  };
}

/** Parses one recorded line (already JSON-parsed); `undefined` with the zod error when it is not one. */
export function parseRecordedDecision(
  value: unknown,
): { ok: true; record: RecordedDecision } | { ok: false; error: z.ZodError } {
  const parsed = recordingSchemas().line.safeParse(value);
  return parsed.success
    ? { ok: true, record: parsed.data as RecordedDecision }
    : { ok: false, error: parsed.error };
}

/**
 * Records each decision's inputs and outcome to a JSON-lines file (mode 0600), for replay under a new policy.
 * Use it as the gate's audit sink, alone or with `combineAuditSinks`. `close()` waits for pending lines.
 */
export class DecisionRecorder implements AuditSink, AsyncDisposable {
  readonly path: string;
  /** Names the digest key without revealing it. */
  readonly keyId: string;
  readonly #file: JsonLinesFile;
  readonly #key: Buffer;
  readonly #keep: readonly { pattern: ReturnType<typeof compilePattern>; args: ReadonlySet<string> }[];
  readonly #mask: (text: string) => string;

  constructor(options: DecisionRecorderOptions) {
    const parsed = recordingSchemas().options.safeParse({
      file: options.file,
      keep: options.keep,
      digestKey: options.digestKey,
    });
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
      throw new ConfigError(
        `Invalid DecisionRecorder options: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
        { issues },
      );
    }
    const { file, keep, digestKey } = parsed.data;
    this.path = file;
    this.#key = digestKey === undefined ? randomBytes(32) : Buffer.from(digestKey, 'utf8');
    this.keyId = createHmac('sha256', this.#key)
      .update('interlock recording key id')
      .digest('hex')
      .slice(0, 16);
    this.#keep = (keep ?? []).map((k) => ({ pattern: compilePattern(k.resource), args: new Set(k.args) }));
    this.#mask = createMasker(options.secrets ?? []);
    this.#file = new JsonLinesFile(file, options.mode ?? 0o600, 'decision recording');
  }

  write(record: AuditRecord, request?: AccessRequest): Promise<void> {
    const context = request?.context;
    const line: RecordedDecision = {
      v: RECORDING_VERSION,
      time: record.time,
      agent: record.agent,
      principal: record.principal,
      resource: record.resource,
      action: record.action,
      server: record.server,
      tool: record.tool,
      definitionHash: record.definitionHash,
      annotations: context?.annotations,
      labels: context?.labels === undefined ? undefined : [...context.labels],
      flow: context?.flow === undefined ? undefined : { labels: context.flow.snapshot().labels },
      args: this.#args(record.resource, context?.args),
      keyId: this.keyId,
      decision: {
        effect: record.effect,
        allowed: record.allowed,
        ruleId: record.ruleId,
        approved: record.approved,
        policyRevision: record.policyRevision,
      },
    };
    return this.#file.append(line);
  }

  #args(
    resource: string,
    args: Readonly<Record<string, unknown>> | undefined,
  ): Record<string, RecordedValue> | undefined {
    if (args === undefined || args === null || typeof args !== 'object') return undefined;
    let kept: ReadonlySet<string> | undefined;
    const out: Record<string, RecordedValue> = {};
    for (const [name, value] of Object.entries(args)) {
      // As on the wire: an undefined value is no argument.
      if (value === undefined) continue;
      kept ??= this.#keptFor(resource);
      out[name] =
        kept.has(name) && !SECRET_NAME.test(name) && this.#safe(value) ? { value } : this.#digest(value);
    }
    return out;
  }

  #keptFor(resource: string): ReadonlySet<string> {
    const names = new Set<string>();
    for (const k of this.#keep) if (matchPattern(k.pattern, resource)) for (const a of k.args) names.add(a);
    return names;
  }

  /** Whether a value may be kept as it is: no secret-named field and no known secret value anywhere in it. */
  #safe(value: unknown, depth = 0): boolean {
    if (depth > 64) return false;
    if (typeof value === 'string') return this.#mask(value) === value;
    if (Array.isArray(value)) return value.every((v) => this.#safe(v, depth + 1));
    if (typeof value === 'object' && value !== null) {
      return Object.entries(value).every(([k, v]) => !SECRET_NAME.test(k) && this.#safe(v, depth + 1));
    }
    return true;
  }

  #digest(value: unknown): RecordedValue {
    const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
    const digest = createHmac('sha256', this.#key)
      .update(canonicalJson(value) ?? 'undefined')
      .digest('hex');
    return { type, digest: `hmac-sha256:${digest}` };
  }

  /** Waits for pending lines and closes the file. Safe to call more than once. */
  close(): Promise<void> {
    return this.#file.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** JSON with object keys sorted at every level: one text per value, for digests and hashes. */
export function canonicalJson(value: unknown): string | undefined {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}
