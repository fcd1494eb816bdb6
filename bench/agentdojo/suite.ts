/**
 * A suite on disk (bench/agentdojo/README.md, "The suite format"): `suite.yaml` (tools, injection vectors, the
 * injection text), `environment.json` (the environment, `{vector}` where an injection goes) and `tasks.yaml` (user
 * and injection tasks). Checked once with zod when loaded; a bad file is `INVALID_CONFIG` naming the field.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { ConfigError } from '../../src/errors.js';
import type { Json } from './ops.js';

const json: z.ZodType<Json> = z.lazy(() =>
  z.union([z.null(), z.boolean(), z.number(), z.string(), z.array(json), z.record(z.string(), json)]),
);
const object = z.record(z.string(), json);

const ToolSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/),
  description: z.string(),
  inputSchema: object,
  annotations: z.strictObject({
    readOnlyHint: z.boolean().optional(),
    destructiveHint: z.boolean().optional(),
    idempotentHint: z.boolean().optional(),
    openWorldHint: z.boolean().optional(),
  }),
  steps: z.array(object).min(1),
});

const SuiteSchema = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9-]{0,39}$/),
  /** The fixed time tools stamp on what they create. */
  now: z.string(),
  /** The text put in every injection vector the user task reads; `{goal}` is replaced by the injection's goal. */
  injectionTemplate: z.string().includes('{goal}'),
  vectors: z.record(
    z.string().regex(/^[A-Za-z0-9_]+$/),
    z.strictObject({ description: z.string(), default: z.string() }),
  ),
  tools: z.array(ToolSchema).min(1),
});

const CallSchema = z.strictObject({ tool: z.string(), args: object });

const TasksSchema = z.strictObject({
  userTasks: z
    .array(z.strictObject({ id: z.string(), prompt: z.string(), calls: z.array(CallSchema).min(1) }))
    .min(1),
  injectionTasks: z
    .array(
      z.strictObject({
        id: z.string(),
        goal: z.string(),
        calls: z.array(CallSchema).min(1),
        /** The benchmark's security check: a condition over `{ pre, post, calls }` (calls that ran). */
        security: object,
      }),
    )
    .min(1),
});

export type SuiteTool = z.infer<typeof ToolSchema>;
export type TaskCall = z.infer<typeof CallSchema>;
export type UserTask = z.infer<typeof TasksSchema>['userTasks'][number];
export type InjectionTask = z.infer<typeof TasksSchema>['injectionTasks'][number];

/** A suite as loaded: its definition, its tasks, and its environment with `{vector}` placeholders. */
export interface Suite extends z.infer<typeof SuiteSchema> {
  readonly environment: Json;
  readonly userTasks: readonly UserTask[];
  readonly injectionTasks: readonly InjectionTask[];
}

function parseFile<T>(schema: z.ZodType<T>, file: string, text: string, asJson: boolean): T {
  let raw: unknown;
  try {
    raw = asJson ? JSON.parse(text) : parse(text);
  } catch (err) {
    throw new ConfigError(`${file} is not valid ${asJson ? 'JSON' : 'YAML'}: fix its syntax`, { cause: err });
  }
  const result = schema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new ConfigError(`${file}: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
  }
  return result.data;
}

/** Loads and checks the suite in `dir`. */
export function loadSuite(dir: string): Suite {
  const read = (name: string) => readFileSync(join(dir, name), 'utf8');
  const suite = parseFile(SuiteSchema, join(dir, 'suite.yaml'), read('suite.yaml'), false);
  const tasks = parseFile(TasksSchema, join(dir, 'tasks.yaml'), read('tasks.yaml'), false);
  const environment = parseFile(json, join(dir, 'environment.json'), read('environment.json'), true);
  const known = new Set(suite.tools.map((t) => t.name));
  for (const task of [...tasks.userTasks, ...tasks.injectionTasks]) {
    for (const call of task.calls) {
      if (!known.has(call.tool)) {
        throw new ConfigError(
          `${join(dir, 'tasks.yaml')}: ${task.id} calls '${call.tool}', which suite.yaml does not define`,
        );
      }
    }
  }
  return { ...suite, ...tasks, environment };
}

const PLACEHOLDER = /\{([A-Za-z0-9_]+)\}/g;

/**
 * Fills `{vector}` placeholders in every string (and object key) of `value`: a vector named in `injections` gets
 * that text, any other its default. Only names the suite declares are replaced, so other braces stay as they are.
 */
export function fillVectors(
  value: Json,
  suite: Pick<Suite, 'vectors'>,
  injections: Readonly<Record<string, string>>,
): Json {
  const fill = (s: string) =>
    s.replace(PLACEHOLDER, (whole, name: string) => {
      const vector = suite.vectors[name];
      if (vector === undefined) return whole;
      return injections[name] ?? vector.default;
    });
  const walk = (v: Json): Json => {
    if (typeof v === 'string') return fill(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') {
      const out: Record<string, Json> = {};
      for (const [k, x] of Object.entries(v)) out[fill(k)] = walk(x);
      return out;
    }
    return v;
  };
  return walk(value);
}
