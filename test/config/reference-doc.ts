// Renders the field tables of docs/reference/config-file.md from the project file's JSON Schema, so the page
// cannot drift from the schema (test/config/generated.test.ts compares, and rewrites with
// INTERLOCK_WRITE_GENERATED=1).

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

/** A short type for a table cell. */
function typeOf(root: Json, raw: unknown): string {
  const s = resolve(root, raw);
  if (s.const !== undefined) return code(JSON.stringify(s.const));
  if (Array.isArray(s.enum)) return s.enum.map((v) => code(JSON.stringify(v))).join(', ');
  if (Array.isArray(s.anyOf)) {
    // A branch that only admits `${VAR}` placeholders is an editor aid, not a type.
    const branches = s.anyOf.filter(
      (b) => !(isObject(b) && typeof b.pattern === 'string' && b.pattern.startsWith('\\$')),
    );
    return [...new Set(branches.map((b) => typeOf(root, b)))].join(' or ');
  }
  if (Array.isArray(s.type)) return s.type.join(' or ');
  switch (s.type) {
    case 'array':
      return `list of ${typeOf(root, s.items)}`;
    case 'object':
      if (isObject(s.properties)) return 'object';
      return isObject(s.additionalProperties) ? `map of ${typeOf(root, s.additionalProperties)}` : 'object';
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

function table(root: Json, object: Json, extra?: (key: string) => string, extraHeader?: string): string {
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
      typeOf(root, s),
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

/** The generated part of the reference page. */
export function renderReference(schema: Json): string {
  const props = schema.properties as Record<string, Json>;
  const out: string[] = [];
  out.push('## Top-level fields', '', table(schema, schema), '');

  // Server entries: one table over every transport, saying which transports each field applies to.
  const entry = resolve(schema, (schema.definitions as Json).serverEntry);
  const transportOf = (v: Json) => resolve(schema, (v.properties as Json).transport).const;
  // One variant per transport; the last one (options for a server of mcpConfig) is described in prose.
  const variants = (entry.anyOf as unknown[])
    .map((v) => resolve(schema, v))
    .filter((v) => transportOf(v) !== undefined);
  const merged: Json = { type: 'object', properties: {} };
  const where = new Map<string, string[]>();
  for (const variant of variants) {
    for (const [key, field] of Object.entries(variant.properties as Json)) {
      const known = (merged.properties as Json)[key];
      if (known === undefined) (merged.properties as Json)[key] = field;
      else if (key === 'type' || key === 'transport') {
        const values = (s: unknown) => {
          const r = resolve(schema, s);
          return Array.isArray(r.enum) ? r.enum : r.const === undefined ? [] : [r.const];
        };
        (merged.properties as Json)[key] = {
          ...resolve(schema, known),
          enum: [...values(known), ...values(field)],
          const: undefined,
        };
      }
      where.set(key, [...(where.get(key) ?? []), String(transportOf(variant))]);
    }
  }
  const all = variants.map((v) => String(transportOf(v)));
  const transports = (key: string) => {
    const list = where.get(key) ?? [];
    return list.length === all.length ? 'all' : list.join(', ');
  };
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
