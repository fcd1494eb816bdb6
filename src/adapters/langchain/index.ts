// Public API of `mcp-interlock/langchain`: Interlock's gated tools as LangChain.js tools (issue 18). Any name
// added here becomes public API. Needs the optional peer dependency `@langchain/core` (1.x).
import { type ContentBlock, ToolMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { DynamicStructuredTool, type ToolRunnableConfig, type ToolRuntime } from '@langchain/core/tools';
import type { JsonSchema7Type } from '@langchain/core/utils/json_schema';
import {
  type AdapterToolSource,
  adapterTools,
  callForModel,
  type MediaAdapterOptions,
  mediaFor,
} from '../shared.js';

/** Options of {@link toLangChainTools}. */
export type LangChainToolsOptions = MediaAdapterOptions;

/**
 * The manager's tools as LangChain `DynamicStructuredTool`s named `mcp__{server}__{tool}`, for `createAgent`,
 * a `ToolNode` or `model.bindTools`. Each call goes through the manager, so its capability set decides every
 * call. Called with a tool call (as agents do), a denied or failed call, or one the server reports as failed
 * (`isError`), returns a `ToolMessage` with `status: 'error'` whose content is the denial the model reads; called directly with plain arguments, it
 * throws the coded error. Input schemas are the servers' JSON Schemas as they are. The list is a snapshot:
 * convert again after the tools change.
 */
export function toLangChainTools(
  source: AdapterToolSource,
  options: LangChainToolsOptions = {},
): DynamicStructuredTool[] {
  return adapterTools(source, options).map(
    (definition) =>
      new DynamicStructuredTool({
        name: definition.name,
        description: definition.description,
        // A copy: LangChain's JSON Schema validator annotates the schema it is given, and ours is frozen.
        schema: structuredClone(definition.inputSchema) as JsonSchema7Type,
        func: async (input: unknown, _runManager, config?: RunnableConfig) => {
          const outcome = await callForModel(source, definition.name, input, options, config?.signal);
          const toolCallId = toolCallIdOf(config);
          if (!outcome.ok) {
            if (toolCallId === undefined) throw outcome.error;
            return errorMessage(outcome.output, toolCallId, definition.name);
          }
          // The server reported the call as failed (`isError`): an error for LangChain too, with its text.
          if (outcome.result.isError && toolCallId !== undefined) {
            return errorMessage(outcome.result.text, toolCallId, definition.name);
          }
          const media = mediaFor(options, outcome.result);
          if (media.length === 0) return outcome.result.text;
          const blocks: ContentBlock[] = [
            { type: 'text', text: outcome.result.text },
            ...media.map((m): ContentBlock => ({ type: m.type, data: m.data, mimeType: m.mimeType })),
          ];
          return blocks;
        },
      }),
  );
}

function errorMessage(content: string, toolCallId: string, name: string): ToolMessage {
  return new ToolMessage({ content, tool_call_id: toolCallId, name, status: 'error' });
}

/** The id of the tool call being answered: agents pass it as the runtime's `toolCallId` or the config's `toolCall`. */
function toolCallIdOf(config: RunnableConfig | undefined): string | undefined {
  const runtime = config as (Partial<ToolRuntime> & ToolRunnableConfig) | undefined;
  return runtime?.toolCallId ?? runtime?.toolCall?.id;
}
