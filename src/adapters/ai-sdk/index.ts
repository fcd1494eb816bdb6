// Public API of `mcp-interlock/ai-sdk`: Interlock's gated tools as Vercel AI SDK tools (issue 18). Any name
// added here becomes public API. Needs the optional peer dependency `ai` (6.x).
import { dynamicTool, type JSONSchema7, jsonSchema, type Tool } from 'ai';
import type { MediaContent } from '../../tools/media.js';
import {
  type AdapterToolSource,
  adapterTools,
  callForModel,
  type MediaAdapterOptions,
  mediaFor,
} from '../shared.js';

/** Options of {@link toAISDKTools}. */
export type AISDKToolsOptions = MediaAdapterOptions;

/** What a tool's `execute` resolves to with `toolResults: 'content'`: the text and the result's media. */
export interface AISDKContentOutput {
  readonly text: string;
  readonly media: readonly MediaContent[];
}

/**
 * The manager's tools as an AI SDK `ToolSet` (dynamic tools keyed by `mcp__{server}__{tool}`), for
 * `generateText`, `streamText` or an `Agent`. Each `execute` calls through the manager, so its capability set
 * decides every call; a denied call throws the coded `PermissionDeniedError`, which the AI SDK reports as a
 * `tool-error` and shows the model as the denial's message. Input schemas are the servers' JSON Schemas as they
 * are (`jsonSchema()`); the manager validates arguments. The set is a snapshot: convert again after the tools
 * change.
 */
export function toAISDKTools(
  source: AdapterToolSource,
  options: AISDKToolsOptions = {},
): Record<string, Tool<unknown, unknown>> {
  const tools: Record<string, Tool<unknown, unknown>> = {};
  for (const definition of adapterTools(source, options)) {
    tools[definition.name] = dynamicTool({
      description: definition.description,
      ...(definition.title === undefined ? {} : { title: definition.title }),
      inputSchema: jsonSchema(definition.inputSchema as JSONSchema7),
      execute: async (input, { abortSignal }) => {
        const outcome = await callForModel(source, definition.name, input, options, abortSignal);
        if (!outcome.ok) throw outcome.error;
        if (options.toolResults !== 'content') return outcome.result.text;
        const output: AISDKContentOutput = {
          text: outcome.result.text,
          media: mediaFor(options, outcome.result),
        };
        return output;
      },
      ...(options.toolResults === 'content' ? { toModelOutput: ({ output }) => contentOutput(output) } : {}),
    });
  }
  return tools;
}

/** What a tool's `toModelOutput` returns (the AI SDK does not export the type by name). */
type ToolResultOutput = Awaited<ReturnType<NonNullable<Tool<unknown, unknown>['toModelOutput']>>>;

/** A content output as the model's tool result: the text, then each image or audio clip. */
function contentOutput(output: unknown): ToolResultOutput {
  const { text, media } = output as AISDKContentOutput;
  if (media.length === 0) return { type: 'text', value: text };
  return {
    type: 'content',
    value: [
      { type: 'text', text },
      ...media.map((m) =>
        m.type === 'image'
          ? { type: 'image-data' as const, data: m.data, mediaType: m.mimeType }
          : { type: 'file-data' as const, data: m.data, mediaType: m.mimeType },
      ),
    ],
  };
}
