// Renders the field tables of docs/reference/config-file.md (from the project file's JSON Schema) and of
// docs/reference/config-types.md (from the JSON Schema of each zod schema behind a public type), so the pages
// cannot drift from the schemas, whose `.describe()` texts are the one source of every description
// (test/config/generated.test.ts compares, and rewrites with INTERLOCK_WRITE_GENERATED=1).

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export const BEGIN =
  '<!-- BEGIN GENERATED: do not edit; INTERLOCK_WRITE_GENERATED=1 npx vitest run test/config -->';
export const END = '<!-- END GENERATED -->';

function resolve(root: Json, schema: unknown): Json {
  if (!isObject(schema)) return {};
  const ref = schema.$ref;
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    let node: unknown = root;
    for (const key of ref.slice(2).split('/')) node = isObject(node) ? node[key] : undefined;
    return resolve(root, node);
  }
  return schema;
}

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const code = (text: string): string => `\`${text}\``;

/** The name a type cell shows for a schema that has a section of its own (a link), or undefined. */
type Namer = (schema: Json) => string | undefined;

/** A short type for a table cell. */
function typeOf(root: Json, raw: unknown, named?: Namer): string {
  const s = resolve(root, raw);
  const name = named?.(s);
  if (name !== undefined) return name;
  if (s.const !== undefined) return code(JSON.stringify(s.const));
  if (Array.isArray(s.enum)) return s.enum.map((v) => code(JSON.stringify(v))).join(', ');
  // A discriminated union (a server's `auth`) comes out as `oneOf`: shown as its branches, as `anyOf` is.
  const union = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined;
  if (union !== undefined) {
    // A branch that only admits `${VAR}` placeholders is an editor aid, not a type; `z.literal(Infinity)` comes
    // out as `{ type: 'number', const: null }` (JSON has no Infinity) and says nothing either.
    const branches = union.filter(
      (b) =>
        !(isObject(b) && typeof b.pattern === 'string' && b.pattern.startsWith('\\$')) &&
        !(isObject(b) && b.const === null && b.type === 'number'),
    );
    return [...new Set(branches.map((b) => typeOf(root, b, named)))].join(' or ');
  }
  if (Array.isArray(s.type)) return s.type.join(' or ');
  switch (s.type) {
    case 'array':
      return `list of ${typeOf(root, s.items, named)}`;
    case 'object':
      if (isObject(s.properties)) return 'object';
      return isObject(s.additionalProperties)
        ? `map of ${typeOf(root, s.additionalProperties, named)}`
        : 'object';
    case 'string':
      return typeof s.format === 'string' ? `string (${s.format})` : 'string';
    default:
      return typeof s.type === 'string' ? s.type : 'any';
  }
}

function defaultOf(root: Json, raw: unknown): string {
  const s = resolve(root, raw);
  return s.default === undefined ? '' : code(JSON.stringify(s.default));
}

function table(
  root: Json,
  object: Json,
  extra?: (key: string) => string,
  extraHeader?: string,
  named?: Namer,
): string {
  const properties = isObject(object.properties) ? object.properties : {};
  const required = new Set(Array.isArray(object.required) ? (object.required as string[]) : []);
  const header = [
    'Field',
    'Type',
    'Default',
    ...(extraHeader === undefined ? [] : [extraHeader]),
    'Description',
  ];
  const rows = Object.entries(properties).map(([key, raw]) => {
    const s = resolve(root, raw);
    const name = required.has(key) ? `${code(key)} (required)` : code(key);
    const description = typeof s.description === 'string' ? s.description : '';
    return [
      name,
      typeOf(root, s, named),
      defaultOf(root, s),
      ...(extra === undefined ? [] : [extra(key)]),
      description,
    ];
  });
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}

/**
 * One object over the server variants of `branches` (one per transport; a branch without a `transport`
 * constant is left out), and for each field the transports it applies to (`all` when every one).
 */
function mergeTransports(root: Json, branches: readonly unknown[]) {
  const transportOf = (v: Json) => resolve(root, (v.properties as Json).transport).const;
  const variants = branches.map((v) => resolve(root, v)).filter((v) => transportOf(v) !== undefined);
  const merged: Json = { type: 'object', properties: {}, required: [] };
  const where = new Map<string, string[]>();
  for (const variant of variants) {
    for (const [key, field] of Object.entries(variant.properties as Json)) {
      const known = (merged.properties as Json)[key];
      if (known === undefined) (merged.properties as Json)[key] = field;
      else if (key === 'type' || key === 'transport') {
        const values = (s: unknown) => {
          const r = resolve(root, s);
          return Array.isArray(r.enum) ? r.enum : r.const === undefined ? [] : [r.const];
        };
        (merged.properties as Json)[key] = {
          ...resolve(root, known),
          enum: [...values(known), ...values(field)],
          const: undefined,
        };
      }
      where.set(key, [...(where.get(key) ?? []), String(transportOf(variant))]);
    }
  }
  // A field is required when every variant that has it requires it (`command` for stdio).
  const requiredBy = (key: string) =>
    variants
      .filter((v) => key in (v.properties as Json))
      .every((v) => Array.isArray(v.required) && (v.required as string[]).includes(key));
  merged.required = Object.keys(merged.properties as Json).filter(requiredBy);
  const all = variants.map((v) => String(transportOf(v)));
  const transports = (key: string) => {
    const list = where.get(key) ?? [];
    return list.length === all.length ? 'all' : list.join(', ');
  };
  return { merged, transports };
}

/** The generated part of the reference page. */
export function renderReference(schema: Json): string {
  const props = schema.properties as Record<string, Json>;
  const out: string[] = [];
  out.push('## Top-level fields', '', table(schema, schema), '');
  // Sections that are objects get a table each, and so do objects inside them (`http.tls`, `state.redis`).
  const sections = (prefix: string, object: Json) => {
    for (const [key, raw] of Object.entries(object.properties as Json)) {
      if (prefix === '' && ['mcpServers', 'servers', 'policy'].includes(key)) continue;
      const s = resolve(schema, raw);
      const branches = [
        s,
        ...((Array.isArray(s.anyOf) ? s.anyOf : []) as unknown[]).map((b) => resolve(schema, b)),
      ];
      const inner = branches.find((b) => isObject(b.properties));
      if (inner === undefined) continue;
      const path = `${prefix}${key}`;
      out.push(`### \`${path}\``, '', table(schema, inner), '');
      sections(`${path}.`, inner);
    }
  };
  sections('', schema);

  // Server entries: one table over every transport, saying which transports each field applies to.
  const entry = resolve(schema, (schema.definitions as Json).serverEntry);
  const { merged, transports } = mergeTransports(schema, entry.anyOf as unknown[]);
  out.push(
    '## Server entries',
    '',
    'Each entry of `mcpServers` (or `servers`) is one server, by name. A name is 1 to 40 characters of',
    '`A-Z a-z 0-9 _ -`, without `__`, not starting or ending with `_`. An entry needs `command` (a local server',
    'over stdio) or `url` (a remote one); without `type` or `transport`, a `url` means `auto`. An entry named',
    'like a server of `mcpConfig` and without `command` or `url` holds options for that server instead.',
    '',
    table(schema, merged, transports, 'Transports'),
    '',
  );
  for (const [key, raw] of Object.entries(merged.properties as Json)) {
    const s = resolve(schema, raw);
    if (s.type === 'object' && isObject(s.properties)) {
      out.push(`### Server \`${key}\``, '', table(schema, s), '');
    }
    // A discriminated union (`auth`): one table per kind, named by its `type`.
    for (const branch of (Array.isArray(s.oneOf) ? s.oneOf : []).map((b) => resolve(schema, b))) {
      const kind = resolve(schema, (branch.properties as Json | undefined)?.type).const;
      if (typeof kind !== 'string') continue;
      out.push(`### Server \`${key}\` (\`type: ${kind}\`)`, '', table(schema, branch), '');
    }
  }

  // The policy, inline.
  const policy = (resolve(schema, props.policy).anyOf as unknown[]).map((b) => resolve(schema, b));
  const inline = policy.find((b) => isObject(b.properties) && 'rules' in b.properties) ?? {};
  const rule = resolve(schema, resolve(schema, (inline.properties as Json).rules).items);
  out.push('## Policy', '', table(schema, inline), '', '### Policy rules', '', table(schema, rule), '');
  const when = resolve(schema, (rule.properties as Json).when);
  out.push('### Rule conditions (`when`)', '', table(schema, when), '');
  const arg = resolve(schema, resolve(schema, (when.properties as Json).args).additionalProperties);
  out.push('### Argument constraints (`when.args.<name>`)', '', table(schema, arg), '');
  return out.join('\n').trimEnd();
}

/** `page` with its generated part replaced by `generated`. */
export function withGenerated(page: string, generated: string): string {
  const start = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error('the page has no generated part (BEGIN/END markers)');
  return `${page.slice(0, start + BEGIN.length)}\n\n${generated}\n\n${page.slice(end)}`;
}

/** One public type whose fields the API reference lists: a type alias of a zod schema. */
export interface DocumentedType {
  /** The type's name, the heading of its section and the TypeDoc page it is added to. */
  readonly name: string;
  /** Other type aliases of the same schema (or one of its variants) whose TypeDoc pages link to the section. */
  readonly aliases?: readonly string[];
  /** The entry point that exports it, e.g. `mcp-interlock/interop`. */
  readonly module: string;
  /** The exported zod schema the type comes from. */
  readonly schema: string;
  /** `z.toJSONSchema(schema, { io: 'input' })`: what callers write. */
  readonly json: Json;
}

/** `schema` without what differs between its uses (its description and default), for recognizing it. */
function identity(schema: Json): string {
  const { description: _d, default: _v, $schema: _s, ...rest } = schema;
  return JSON.stringify(rest);
}

const anchor = (name: string): string => name.toLowerCase();

/** The generated part of docs/reference/config-types.md: one section per type, its fields in a table. */
export function renderTypes(types: readonly DocumentedType[]): string {
  const ids = new Map<string, string>();
  for (const type of types) ids.set(identity(type.json), type.name);
  const out: string[] = [];
  for (const type of types) {
    const root = type.json;
    // A field whose schema is another documented type links to that type's section (not to itself).
    const named: Namer = (s) => {
      const name = ids.get(identity(s));
      return name === undefined || s === root ? undefined : `[${name}](#${anchor(name)})`;
    };
    const others = type.aliases ?? [];
    out.push(
      `## ${type.name}`,
      '',
      `<!-- types: ${[type.name, ...others].join(' ')} -->`,
      '',
      `\`import type { ${type.name} } from '${type.module}'\`, from the schema \`${type.schema}\`` +
        (others.length === 0 ? '.' : ` (also: ${others.map(code).join(', ')}).`),
      '',
    );
    if (typeof root.description === 'string') out.push(root.description, '');
    const variants = Array.isArray(root.anyOf) ? root.anyOf : Array.isArray(root.oneOf) ? root.oneOf : [];
    const nested: [string, Json][] = [];
    if (isObject(root.properties)) {
      out.push(table(root, root, undefined, undefined, named), '');
      for (const [key, raw] of Object.entries(root.properties)) nested.push([key, resolve(root, raw)]);
    } else if (variants.length > 0 && variants.every((v) => isObject(resolve(root, v).properties))) {
      const { merged, transports } = mergeTransports(root, variants);
      out.push(table(root, merged, transports, 'Transports', named), '');
      for (const raw of variants) {
        const variant = resolve(root, raw);
        const kind = resolve(root, (variant.properties as Json).transport).const;
        if (typeof variant.description === 'string') out.push(`- \`${kind}\`: ${variant.description}`);
      }
      out.push('');
      for (const [key, raw] of Object.entries(merged.properties as Json))
        nested.push([key, resolve(root, raw)]);
    } else {
      out.push(`One of: ${typeOf(root, root)}.`, '');
    }
    // Objects inside that have no section of their own get a table under this one.
    for (const [key, s] of nested) {
      if (named(s) !== undefined) continue;
      const object = [
        s,
        ...((Array.isArray(s.anyOf) ? s.anyOf : []) as unknown[]).map((b) => resolve(root, b)),
      ].find((o) => isObject(o.properties));
      if (object === undefined) continue;
      out.push(`### ${type.name}.${key}`, '', table(root, object, undefined, undefined, named), '');
    }
  }
  return out.join('\n').trimEnd();
}
