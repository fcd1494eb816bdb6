/**
 * Tool schemas given to `registerTools` for offline use, parsed once where they enter. The shapes follow
 * MCP `Tool` (2025-11-25), so a `tools/list` result can be registered as it is.
 */
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { isJsonObject } from '../json.js';
import { lazySchema, once } from '../lazy.js';
import { describeIssues, toConfigIssues } from '../zod-issues.js';

/** Longest tool name accepted. */
const MAX_NAME_LENGTH = 256;

/**
 * A JSON Schema object describing an object (MCP: tool input and output schemas have `type: 'object'` at
 * the root). Kept whole; a missing `type` becomes `'object'`.
 */
const ObjectJsonSchema = once(() =>
  z
    .looseObject({
      type: z
        .literal('object', { error: "must be 'object' (a tool's schema describes the arguments object)" })
        .optional(),
      properties: z
        .record(z.string(), z.record(z.string(), z.unknown(), { error: 'must be a JSON Schema object' }))
        .optional(),
      required: z.array(z.string()).optional(),
    })
    .transform((schema) => ({ ...schema, type: 'object' as const })),
);

/** Hints a server gives about a tool (MCP `ToolAnnotations`); untrusted. */
const ToolAnnotationsInputSchema = once(() =>
  z.object({
    title: z.string().optional(),
    readOnlyHint: z.boolean().optional(),
    destructiveHint: z.boolean().optional(),
    idempotentHint: z.boolean().optional(),
    openWorldHint: z.boolean().optional(),
  }),
);

/** An icon (MCP `Icon`); which sources are kept is decided where definitions enter the catalog. */
const ToolIconInputSchema = once(() =>
  z.object({
    src: z.string().min(1),
    mimeType: z.string().optional(),
    sizes: z.array(z.string()).optional(),
    theme: z.enum(['light', 'dark']).optional(),
  }),
);

/**
 * One tool schema for offline registration (the fields of MCP `Tool` that Interlock uses). Built at its first use
 * (issue 15, import time), as are the schemas it is made of.
 */
export const ToolSchemaInputSchema = lazySchema(() =>
  z.object({
    name: z.string().min(1).max(MAX_NAME_LENGTH),
    title: z.string().optional(),
    description: z.string().optional(),
    icons: z.array(ToolIconInputSchema()).optional(),
    inputSchema: ObjectJsonSchema(),
    outputSchema: ObjectJsonSchema().optional(),
    annotations: ToolAnnotationsInputSchema().optional(),
  }),
);

/** A parsed tool schema; `inputSchema.type` is always `'object'`. */
export type ToolSchemaInput = z.output<typeof ToolSchemaInputSchema>;

const ToolSchemaListSchema = once(() =>
  z.array(ToolSchemaInputSchema).superRefine((tools, ctx) => {
    const first = new Map<string, number>();
    tools.forEach((tool, index) => {
      const earlier = first.get(tool.name);
      if (earlier === undefined) {
        first.set(tool.name, index);
        return;
      }
      ctx.addIssue({
        code: 'custom',
        path: [index, 'name'],
        message: `duplicate tool name ${JSON.stringify(tool.name)} (also at tools[${earlier}])`,
      });
    });
  }),
);

/**
 * Parses the tool schemas given for `server`: an array of MCP `Tool` objects, or a `tools/list` result
 * (`{ tools: [...] }`). Returns copies that share nothing with `input`. Throws `ConfigError` naming the
 * server and the path of each bad field (`tools[2].inputSchema.type`), also for duplicate names.
 */
export function parseToolSchemas(server: string, input: unknown): ToolSchemaInput[] {
  const list = isJsonObject(input) && 'tools' in input ? (input as { tools: unknown }).tools : input;
  const parsed = ToolSchemaListSchema().safeParse(list);
  if (!parsed.success) {
    // `tools[2].inputSchema.type`
    const issues = toConfigIssues(parsed.error, 'tools');
    const summary = describeIssues(issues);
    throw new ConfigError(`Invalid tool schemas for server '${server}': ${summary}.`, { server, issues });
  }
  try {
    return structuredClone(parsed.data);
  } catch (error) {
    throw new ConfigError(
      `Invalid tool schemas for server '${server}': schemas must be plain JSON data (${String(error)}).`,
      { server, cause: error, issues: [{ path: 'tools', message: 'not plain JSON data' }] },
    );
  }
}
