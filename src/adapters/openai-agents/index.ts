// Public API of `mcp-interlock/openai-agents`: Interlock's gated tools as OpenAI Agents SDK function tools
// (issue 18). Any name added here becomes public API. Needs the optional peer dependency `@openai/agents`.
import { type FunctionTool, type ToolOutputImage, type ToolOutputText, tool } from '@openai/agents';
import { ConfigError } from '../../errors.js';
import { classifyCallError } from '../../session/call-errors.js';
import {
  type AdapterToolSource,
  adapterTools,
  callForModel,
  type MediaAdapterOptions,
  mediaFor,
} from '../shared.js';

export type { AdapterOptions, AdapterToolSource, MediaAdapterOptions } from '../shared.js';

/**
 * Options of {@link toOpenAIAgentsTools}. With `toolResults: 'content'`, images reach the model as image outputs;
 * audio stays a text placeholder (function call outputs take text, images and files, not audio).
 */
export type OpenAIAgentsToolsOptions = MediaAdapterOptions;

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
 * snapshot: convert again after the tools change. Throws `INVALID_CONFIG` when two tools would get one name.
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
  const seen = new Map<string, string>();
  tools.forEach((t, i) => {
    const exposed = definitions[i]?.name ?? t.name;
    const other = seen.get(t.name);
    if (other !== undefined) {
      throw new ConfigError(
        `Tools '${other}' and '${exposed}' would both be named '${t.name}' in the OpenAI Agents SDK (it turns every character but letters, digits and _ into _). Leave one out with the 'filter' option.`,
      );
    }
    seen.set(t.name, exposed);
  });
  return tools;
}
