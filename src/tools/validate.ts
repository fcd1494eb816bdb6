/**
 * Argument validation against a tool's `inputSchema`, before anything is sent. JSON Schema 2020-12 is the
 * default dialect (MCP 2025-11-25: a schema without `$schema` is 2020-12); 2019-09, draft-07, draft-06
 * and draft-04 are also understood. Validation never changes the arguments (no defaults, no coercion). The same
 * engine checks a tool's `structuredContent` against its `outputSchema`. Every schema is first held to the bounds
 * of schema-bounds.ts: `$ref`s resolve only inside the schema, and size, depth and `$ref` expansion are capped.
 */
import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import type { Ajv2019 } from 'ajv/dist/2019.js';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { RegExpEngine, RegExpLike } from 'ajv/dist/types/index.js';
import { closest, distance } from 'fastest-levenshtein';
import type { RE2JS } from 're2js';
import { type ToolInputIssue, ToolSchemaError } from '../errors.js';
import { isJsonObject } from '../json.js';
import { DEFAULT_MAX_VALUE_DEPTH, type SchemaLimits, schemaBoundsProblem } from './schema-bounds.js';

/** Checks arguments against one input schema; an empty array means they are valid. */
export type InputValidator = (args: unknown) => ToolInputIssue[];

/** Names used in error messages of {@link compileInputValidator} and {@link compileOutputValidator}, and limits. */
export interface CompileInputValidatorOptions {
  /** Caps on the schema's size, nesting and `$ref` expansion. @default the `DEFAULT_MAX_SCHEMA_*` constants */
  limits?: SchemaLimits | undefined;
  /** The tool the schema belongs to. */
  toolName?: string | undefined;
  /** The server the tool belongs to. */
  server?: string | undefined;
}

type Dialect = '2020-12' | '2019-09' | 'draft-07' | 'draft-06' | 'draft-04';
type Engine = '2020-12' | '2019-09' | 'classic';
type AjvInstance = Ajv | Ajv2019 | Ajv2020;

/** `$schema` URIs without scheme and trailing `#`, so `http`/`https` and `#` variants all match. */
const DIALECTS: Readonly<Record<string, Dialect>> = {
  'json-schema.org/draft/2020-12/schema': '2020-12',
  'json-schema.org/draft/2019-09/schema': '2019-09',
  'json-schema.org/draft-07/schema': 'draft-07',
  'json-schema.org/draft-06/schema': 'draft-06',
  'json-schema.org/draft-04/schema': 'draft-04',
};

/** Most issues reported for one call; the rest are summed up in a last issue. */
const MAX_ISSUES = 20;
/**
 * Compilations after which a shared instance is replaced by a fresh one. Ajv keeps a little state for each
 * schema it compiled (regular expressions, referenced subschemas); recycling bounds that when servers
 * change their tool lists for a long time. Validators already compiled keep working.
 */
const RECYCLE_AFTER = 500;

let compiled = 0;
const engines = new Map<Engine, { ajv: AjvInstance; compilations: number }>();

// Ajv, its formats and RE2 take about a third of the interop entry's import time, and many apps never validate
// (no tool called yet, or only offline tools listed): loaded at the first compilation (issue 15, import time), which
// the first connect brings forward to while its server starts (prepareValidationSoon).
const load = createRequire(import.meta.url);
let ajvModules:
  | {
      Ajv: typeof Ajv;
      Ajv2019: typeof Ajv2019;
      Ajv2020: typeof Ajv2020;
      addFormats: (ajv: AjvInstance) => unknown;
    }
  | undefined;
let re2: typeof RE2JS | undefined;

function ajvClasses(): NonNullable<typeof ajvModules> {
  ajvModules ??= {
    Ajv: (load('ajv') as typeof import('ajv')).Ajv,
    Ajv2019: (load('ajv/dist/2019.js') as typeof import('ajv/dist/2019.js')).Ajv2019,
    Ajv2020: (load('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js')).Ajv2020,
    addFormats: (load('ajv-formats') as typeof import('ajv-formats')).default,
  };
  return ajvModules;
}

/** Whether the default engine and its meta-schema are ready, and the turn scheduled to make them so. */
let prepared = false;
let preparing: NodeJS.Immediate | undefined;

/**
 * Builds the default dialect's engine and compiles its meta-schema: the part of checking a tool call's arguments that
 * no tool's schema changes (loading Ajv and its formats, compiling the 2020-12 meta-schema), tens of milliseconds of
 * CPU that the first call of a process would otherwise pay. Safe to call again; a failure is left for that first
 * call to report.
 *
 * @internal
 */
export function prepareValidation(): void {
  try {
    engine('2020-12').ajv.validateSchema({ type: 'object' });
    prepared = true;
  } catch {}
}

/** Whether {@link prepareValidation} has run to the end in this process. @internal */
export function validationPrepared(): boolean {
  return prepared;
}

/**
 * Runs {@link prepareValidation} once per process on a later turn of the event loop: called as a server starts, it
 * runs while the process boots or the first request is in flight, time the event loop would spend waiting. The
 * turn is unref'd, so a process that has nothing else to do exits without it.
 *
 * @internal
 */
export function prepareValidationSoon(): void {
  if (prepared || preparing !== undefined) return;
  preparing = setImmediate(prepareValidation).unref();
}

/** The shared instance of one dialect, created on first use. */
function engine(kind: Engine): { ajv: AjvInstance; compilations: number } {
  let entry = engines.get(kind);
  if (entry === undefined || entry.compilations >= RECYCLE_AFTER) {
    const options = {
      strict: false,
      allErrors: true,
      // `required` and `additionalProperties` look at own properties only: `constructor` or `__proto__`
      // inherited from Object.prototype never count as present arguments.
      ownProperties: true,
      // Every schema is compiled on its own: an `$id` in one tool's schema must not affect another's.
      addUsedSchema: false,
      // A library does not write to the console; unknown formats and keywords are ignored.
      logger: false as const,
      // `pattern` and `patternProperties` come from servers and run on arguments a model wrote: RE2, never a
      // backtracking engine (see `linearRegExp`).
      code: { regExp: linearRegExp },
    };
    const { Ajv, Ajv2019, Ajv2020, addFormats } = ajvClasses();
    const ajv: AjvInstance =
      kind === '2020-12'
        ? new Ajv2020(options)
        : kind === '2019-09'
          ? new Ajv2019(options)
          : new Ajv(options);
    addFormats(ajv);
    // Ajv compares array items pairwise for `uniqueItems`: quadratic, seconds for a few thousand objects that a
    // model (or an attacker steering it) can send. This version is linear in the size of the array.
    ajv.removeKeyword('uniqueItems');
    ajv.addKeyword({
      keyword: 'uniqueItems',
      type: 'array',
      schemaType: 'boolean',
      validate: (unique: boolean, data: unknown[]) => !unique || allDistinct(data),
      errors: false,
    });
    entry = { ajv, compilations: 0 };
    engines.set(kind, entry);
  }
  return entry;
}

/** JSON with object keys sorted: equal JSON values (in the JSON Schema sense) give equal strings. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Whether no two items of `items` are equal JSON values: one canonical form per item, one set. */
function allDistinct(items: readonly unknown[]): boolean {
  const seen = new Set<string>();
  for (const item of items) {
    const key =
      typeof item === 'object' && item !== null ? canonical(item) : `${typeof item}:${String(item)}`;
    if (seen.has(key)) return false;
    seen.add(key);
  }
  return true;
}

/**
 * The regular expressions of input schemas, on RE2 (re2js): matching takes time linear in the input, so a server's
 * `pattern` such as `^(a+)+$` cannot stall the process on a long argument (ReDoS). RE2 has no lookaround and no
 * backreferences; a pattern that needs them is not checked here (the server still validates the call).
 */
export const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string, flags: string): RegExpLike => {
    // Compiling (never running) it as ECMAScript first: a pattern that is not a regular expression at all makes
    // the schema unusable, as before.
    new RegExp(pattern, flags);
    let compiled: RE2JS | undefined;
    try {
      re2 ??= (load('re2js') as typeof import('re2js')).RE2JS;
      compiled = re2.compile(pattern);
    } catch {
      compiled = undefined;
    }
    // Ajv caches compiled patterns by `toString()`: it must differ per pattern.
    const key = `${compiled === undefined ? 'unchecked' : 're2'}:${pattern}`;
    const tester = {
      test: compiled === undefined ? () => true : (input: string) => compiled.test(input),
      toString: () => key,
    };
    return tester;
  },
  // Only used by Ajv's standalone code generation, which Interlock does not use.
  { code: 'interlock/tools linearRegExp' },
);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (!isJsonObject(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * A copy of `schema` with `type: 'object'` when `type` is missing (MCP tool input schemas are objects).
 * The input is never changed.
 */
export function normalizeInputSchema(schema: Record<string, unknown>): Record<string, unknown> {
  return schema.type === undefined ? { ...schema, type: 'object' } : { ...schema };
}

function describe(options: CompileInputValidatorOptions): string {
  const tool = options.toolName === undefined ? 'the tool' : `tool '${options.toolName}'`;
  return options.server === undefined ? tool : `${tool} of server '${options.server}'`;
}

function dialectOf(
  schema: Record<string, unknown>,
  role: SchemaRole,
  options: CompileInputValidatorOptions,
): Dialect {
  const uri = schema.$schema;
  if (uri === undefined) return '2020-12';
  const key = typeof uri === 'string' ? uri.replace(/^https?:\/\//, '').replace(/#$/, '') : undefined;
  const dialect = key === undefined ? undefined : DIALECTS[key];
  if (dialect === undefined) {
    // MCP 2025-11-25 JSON Schema usage: unsupported dialects are reported, not guessed.
    throw new ToolSchemaError(
      `The ${role} schema of ${describe(options)} uses an unsupported JSON Schema dialect ` +
        `(${JSON.stringify(uri)}). Use 2020-12 (or omit $schema), 2019-09, draft-07, draft-06 or draft-04.`,
      { server: options.server },
    );
  }
  return dialect;
}

/** Keys whose values are data, not subschemas: draft-04 rewriting must not touch them. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples']);

/**
 * Rewrites the draft-04 keywords that later drafts changed, so the draft-07 engine reads the schema as
 * draft-04 meant it: boolean `exclusiveMaximum`/`exclusiveMinimum` and `id`. Returns a new value.
 */
function fromDraft04(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(fromDraft04);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] = DATA_KEYWORDS.has(key) ? value : fromDraft04(value);
  }
  for (const [flag, bound] of [
    ['exclusiveMaximum', 'maximum'],
    ['exclusiveMinimum', 'minimum'],
  ] as const) {
    if (typeof out[flag] !== 'boolean') continue;
    if (out[flag] === true && typeof out[bound] === 'number') {
      out[flag] = out[bound];
      delete out[bound];
    } else {
      delete out[flag];
    }
  }
  if (typeof out.id === 'string' && out.$id === undefined) {
    out.$id = out.id;
    delete out.id;
  }
  return out;
}

/** Compiles `schema` (a private copy) and removes what Ajv kept about it, so schemas stay independent. */
function compileIsolated(kind: Engine, schema: Record<string, unknown>): ValidateFunction {
  const entry = engine(kind);
  const { ajv } = entry;
  const refsBefore = new Set(Object.keys(ajv.refs));
  const schemasBefore = new Set(Object.keys(ajv.schemas));
  entry.compilations++;
  try {
    return ajv.compile(schema);
  } finally {
    for (const key of Object.keys(ajv.refs)) if (!refsBefore.has(key)) delete ajv.refs[key];
    for (const key of Object.keys(ajv.schemas)) if (!schemasBefore.has(key)) delete ajv.schemas[key];
    // `removeSchema` of an object with `$id` would also drop whatever that id names (possibly a meta
    // schema); without it, it only forgets the cached compilation of this (private) copy.
    delete schema.$id;
    ajv.removeSchema(schema);
  }
}

/** Which of a tool's schemas is compiled: named in errors. */
type SchemaRole = 'input' | 'output';

/**
 * Compiles one schema of a tool, within the {@link schemaBoundsProblem} limits. Throws `ToolSchemaError` saying
 * what is wrong when the schema is out of bounds, cannot be compiled, or uses an unsupported dialect.
 */
function compileSchema(
  given: Record<string, unknown>,
  role: SchemaRole,
  options: CompileInputValidatorOptions,
): ValidateFunction {
  const unusable = (reason: string, cause?: unknown) =>
    new ToolSchemaError(`The ${role} schema of ${describe(options)} cannot be used: ${reason}.`, {
      cause,
      server: options.server,
    });
  let validate: ValidateFunction;
  try {
    const dialect = dialectOf(given, role, options);
    // Before anything walks it recursively (cloning, Ajv): a hostile schema is refused here, not half-compiled.
    const problem = schemaBoundsProblem(given, { ...options.limits, draft04: dialect === 'draft-04' });
    if (problem !== undefined) throw unusable(problem);
    let schema: Record<string, unknown> = structuredClone(
      role === 'input' ? normalizeInputSchema(given) : given,
    );
    if (dialect === 'draft-04') schema = fromDraft04(schema) as Record<string, unknown>;
    // Each engine validates against its own default meta schema; draft-06/04 are read as draft-07.
    delete schema.$schema;
    const kind: Engine = dialect === '2020-12' || dialect === '2019-09' ? dialect : 'classic';
    // A base URI of its own, so `"$ref": "#"` (recursion to the root) resolves; removed again after compiling.
    schema.$id ??= `urn:interlock:schema:${++compiled}`;
    validate = compileIsolated(kind, schema);
  } catch (error) {
    if (error instanceof ToolSchemaError) throw error;
    throw unusable(error instanceof Error ? error.message : String(error), error);
  }
  if ((validate as { $async?: unknown }).$async === true) {
    throw unusable('"$async" schemas are not supported');
  }
  return validate;
}

/**
 * Compiles a tool's input schema into an {@link InputValidator}. A missing `type` is taken as `object`;
 * `$schema` picks the dialect (2020-12 when absent). Throws `ToolSchemaError` saying what is wrong when
 * the schema cannot be compiled, uses an unsupported dialect, a `$ref` outside the schema, or is out of bounds.
 */
export function compileInputValidator(
  inputSchema: Record<string, unknown>,
  options: CompileInputValidatorOptions = {},
): InputValidator {
  const validate = compileSchema(inputSchema, 'input', options);
  return (args: unknown): ToolInputIssue[] => {
    // No arguments is the same as `{}` (MCP `arguments` is optional).
    const value = args === undefined ? {} : args;
    if (!isPlainObject(value)) {
      return [{ field: '', message: `arguments must be a JSON object, got ${typeName(value)}` }];
    }
    if (validate(value)) return [];
    return withUnknownNames(toIssues(validate.errors ?? []), value, inputSchema.properties);
  };
}

/**
 * On the failure path only: a required argument that is missing while the call carries a name the schema does not
 * know, close to it (`ident` for `id`), is reported with that name, so a misspelling reads as one.
 */
function withUnknownNames(
  issues: ToolInputIssue[],
  args: Record<string, unknown>,
  properties: unknown,
): ToolInputIssue[] {
  if (!isJsonObject(properties)) return issues;
  const unknown = Object.keys(args).filter((key) => !Object.hasOwn(properties, key));
  if (unknown.length === 0) return issues;
  return issues.map((issue) => {
    if (issue.message !== 'is required' || issue.field.lastIndexOf('/') !== 0) return issue;
    const wanted = issue.field.slice(1).replaceAll('~1', '/').replaceAll('~0', '~');
    const near = closest(wanted, unknown);
    const alike =
      near.startsWith(wanted) ||
      wanted.startsWith(near) ||
      distance(wanted, near) <= Math.max(2, wanted.length / 3);
    if (!alike) return issue;
    return {
      field: issue.field,
      message: `is required; '${near}' is not an argument of this tool: did you mean '${wanted}'?`,
    };
  });
}

/** Checks a tool's `structuredContent` against its output schema; an empty array means it matches. */
export type OutputValidator = (structuredContent: unknown) => ToolInputIssue[];

/**
 * Compiles a tool's output schema into an {@link OutputValidator}, once per tool definition. The schema is read as
 * it is (no `type` is added: on MCP 2026-07-28 the root may be any schema). Same dialects, bounds and errors as
 * {@link compileInputValidator}.
 */
export function compileOutputValidator(
  outputSchema: Record<string, unknown>,
  options: CompileInputValidatorOptions = {},
): OutputValidator {
  const validate = compileSchema(outputSchema, 'output', options);
  return (value: unknown): ToolInputIssue[] => {
    // The schema's recursion was bounded for values this deep (schema-bounds.ts); a server's value may be deeper.
    if (deeperThan(value, DEFAULT_MAX_VALUE_DEPTH)) {
      return [
        { field: '', message: `is nested deeper than ${DEFAULT_MAX_VALUE_DEPTH} levels, too deep to check` },
      ];
    }
    return validate(value) ? [] : toIssues(validate.errors ?? []);
  };
}

/** Whether `value` nests objects and arrays more than `max` levels deep. Iterative, stops at the first. */
function deeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return `an instance of ${value.constructor?.name ?? 'a class'}`;
  return `a ${typeof value}`;
}

/** JSON Pointer escaping of one reference token (RFC 6901). */
function pointerToken(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

function shortJson(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 200 ? `${json.slice(0, 200)}...` : json;
}

function toIssue(error: ErrorObject): ToolInputIssue {
  const params = error.params as Record<string, unknown>;
  const at = (key: unknown) => `${error.instancePath}/${pointerToken(String(key))}`;
  switch (error.keyword) {
    case 'required':
      return { field: at(params.missingProperty), message: 'is required' };
    case 'dependencies':
    case 'dependentRequired':
      return {
        field: at(params.missingProperty),
        message: `is required when '${String(params.property)}' is present`,
      };
    case 'additionalProperties':
      return { field: at(params.additionalProperty), message: 'is not an allowed property' };
    case 'unevaluatedProperties':
      return { field: at(params.unevaluatedProperty), message: 'is not an allowed property' };
    case 'enum':
      return { field: error.instancePath, message: `must be one of ${shortJson(params.allowedValues)}` };
    case 'const':
      return { field: error.instancePath, message: `must be ${shortJson(params.allowedValue)}` };
    case 'uniqueItems':
      return { field: error.instancePath, message: 'must not hold the same item twice' };
    default:
      return { field: error.instancePath, message: error.message ?? `fails '${error.keyword}'` };
  }
}

function toIssues(errors: readonly ErrorObject[]): ToolInputIssue[] {
  const seen = new Set<string>();
  const issues: ToolInputIssue[] = [];
  for (const error of errors) {
    const issue = toIssue(error);
    const key = `${issue.field}\u0000${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  if (issues.length <= MAX_ISSUES) return issues;
  const shown = issues.slice(0, MAX_ISSUES);
  shown.push({ field: '', message: `and ${issues.length - MAX_ISSUES} more problems` });
  return shown;
}
