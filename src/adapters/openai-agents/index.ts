// Public API of `mcp-interlock/openai-agents`: Interlock's gated tools as OpenAI Agents SDK function tools
// (issue 18). Any name added here becomes public API. Needs the optional peer dependency `@openai/agents`.
import { type FunctionTool, type ToolOutputImage, type ToolOutputText, tool } from '@openai/agents';
import { classifyCallError } from '../../session/call-errors.js';
import type { ToolDefinition } from '../../tools/tool-wrapper.js';
import {
  type AdapterToolSource,
  adapterTools,
  callForModel,
  type MediaAdapterOptions,
  mediaFor,
} from '../shared.js';

/**
 * Options of {@link toOpenAIAgentsTools}. With `toolResults: 'content'`, images reach the model as image outputs;
 * audio stays a text placeholder (function call outputs take text, images and files, not audio).
 */
export interface OpenAIAgentsToolsOptions extends MediaAdapterOptions {
  /**
   * Told when tools are left out because the SDK would give them one name (`a-b` and `a_b`).
   * @default `process.emitWarning` with code `INTERLOCK_TOOL_NAME_COLLISION`
   */
  onWarning?: ((message: string) => void) | undefined;
}

/** What a tool returns with `toolResults: 'content'` and a result with images. */
export type OpenAIAgentsContentOutput = (ToolOutputText | ToolOutputImage)[];

/** A JSON Schema object as the SDK types tool parameters (it does not export the type by name). */
type JsonParameters = Extract<FunctionTool['parameters'], { additionalProperties: true }>;

/**
 * The manager's tools as OpenAI Agents SDK function tools, for an `Agent`'s `tools`. The SDK names a tool
 * with letters, digits and `_` only, so `mcp__{server}__{tool}` comes out with every other character as `_`
 * (`mcp__everything__get-sum` is `mcp__everything__get_sum`); calls still go to the right tool. Each call goes
 * through the manager, so its capability set decides every call; a denied or failed call goes to the tool's
 * `errorFunction`, which gives the model the denial to read (the SDK's own tool-error path). Input schemas
 * are the servers' JSON Schemas as they are (`strict: false`); the manager validates arguments. The list is a
 * snapshot: convert again after the tools change. Tools the SDK would give one name (`get-sum` and `get_sum`)
 * are all left out, with a warning naming them, and the others are handed out (issue 38): which one a model
 * meant by the shared name cannot be known. Keep one of them with the `filter` option.
 */
export function toOpenAIAgentsTools(
  source: AdapterToolSource,
  options: OpenAIAgentsToolsOptions = {},
): FunctionTool<unknown, JsonParameters, string | OpenAIAgentsContentOutput>[] {
  const definitions = adapterTools(source, options);
  const tools = definitions.map((definition) =>
    tool({
      name: definition.name,
      description: definition.description,
      // The server's schema as it is: non-strict tools take any JSON Schema object.
      parameters: definition.inputSchema as unknown as JsonParameters,
      strict: false,
      execute: async (input, _context, details): Promise<string | OpenAIAgentsContentOutput> => {
        const outcome = await callForModel(source, definition.name, input, options, details?.signal);
        if (!outcome.ok) throw outcome.error;
        const images = mediaFor(options, outcome.result).filter((m) => m.type === 'image');
        if (images.length === 0) return outcome.result.text;
        return [
          { type: 'text', text: outcome.result.text },
          ...images.map(
            (m): ToolOutputImage => ({ type: 'image', image: { data: m.data, mediaType: m.mimeType } }),
          ),
        ];
      },
      errorFunction: (_context, error) => classifyCallError(error).output,
    }),
  );
  return withoutCollisions(tools, definitions, options.onWarning);
}

/**
 * The tools whose SDK name no other one shares (the SDK's own naming decides); each colliding group is left out
 * with one warning. `definitions[i]` is what `tools[i]` was made from.
 */
function withoutCollisions<T extends { name: string }>(
  tools: readonly T[],
  definitions: readonly ToolDefinition[],
  onWarning: ((message: string) => void) | undefined,
): T[] {
  const byName = new Map<string, string[]>();
  tools.forEach((t, i) => {
    const exposed = definitions[i]?.name ?? t.name;
    const group = byName.get(t.name);
    if (group === undefined) byName.set(t.name, [exposed]);
    else group.push(exposed);
  });
  const warn =
    onWarning ??
    ((message: string) => process.emitWarning(message, { code: 'INTERLOCK_TOOL_NAME_COLLISION' }));
  for (const [name, group] of byName) {
    if (group.length < 2) continue;
    warn(
      `Tools ${group.map((n) => `'${n}'`).join(' and ')} would all be named '${name}' in the OpenAI Agents SDK (it turns every character but letters, digits and _ into _); none of them is handed out. Keep one with the 'filter' option.`,
    );
  }
  return tools.filter((t) => byName.get(t.name)?.length === 1);
}
