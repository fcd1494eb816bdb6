// Public API of `mcp-interlock/mastra`: Interlock's gated tools as Mastra tools (issue 18). Any name added here
// becomes public API. Needs the optional peer dependency `@mastra/core` (0.24 on Node 20; see the guide).
import { createTool, type Tool } from '@mastra/core/tools';
import { type AdapterOptions, type AdapterToolSource, adapterTools, callForModel } from '../shared.js';

/**
 * Options of {@link toMastraTools}. Results are text: Mastra 0.x sends a tool's return value to the model as
 * JSON, with no way to hand it an image part, so images and audio stay placeholders in the text.
 */
export type MastraToolsOptions = AdapterOptions;

/** What a denied or failed call returns: the shape Mastra itself returns for a tool input it refuses. */
export interface MastraToolError {
  readonly error: true;
  /** What the model reads: the denial or failure, and what to do instead. */
  readonly message: string;
  /** The Interlock error code, e.g. `CAPABILITY_DENIED`. */
  readonly code: string | undefined;
}

/**
 * The manager's tools as Mastra tools keyed by `mcp__{server}__{tool}`, for an `Agent`'s `tools`. Each call
 * goes through the manager, so its capability set decides every call; a denied or failed call returns
 * {@link MastraToolError} (`{ error: true, message }`, as Mastra answers input it refuses), never throws.
 * Input schemas are the servers' JSON Schemas as they are: Mastra accepts a JSON Schema object as a tool's
 * `inputSchema` and converts it for the model itself. The set is a snapshot: convert again after the tools
 * change.
 */
export function toMastraTools(
  source: AdapterToolSource,
  options: MastraToolsOptions = {},
): Record<string, Tool> {
  const tools: Record<string, Tool> = {};
  for (const definition of adapterTools(source, options)) {
    tools[definition.name] = createTool({
      id: definition.name,
      description: definition.description,
      // Mastra's type says zod; at run time it takes a JSON Schema object and converts it for the model itself.
      inputSchema: definition.inputSchema as unknown as undefined,
      execute: async ({ context }, invocation): Promise<string | MastraToolError> => {
        const signal = (invocation as { abortSignal?: AbortSignal } | undefined)?.abortSignal;
        const outcome = await callForModel(source, definition.name, context, options, signal);
        if (outcome.ok) return outcome.result.text;
        return { error: true, message: outcome.output, code: outcome.code };
      },
    }) as Tool;
  }
  return tools;
}
