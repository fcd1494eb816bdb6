/**
 * Scripted models for each framework's own agent loop: the AI SDK's `MockLanguageModelV3`, a `Model` for the
 * OpenAI Agents SDK, and an AI SDK v2 language model for Mastra. Each answers a list of turns in order and
 * records what it was sent. (LangChain has its own: `fakeModel()` from `@langchain/core/testing`.)
 */
import type { Agent as MastraAgent } from '@mastra/core/agent';
import type { AgentInputItem, AgentOutputItem, Model, ModelRequest, ModelResponse } from '@openai/agents';
import { Usage } from '@openai/agents';
import { MockLanguageModelV3 } from 'ai/test';

// ---- AI SDK ---------------------------------------------------------------------------------------------

/** A model that answers the given turns in order. */
export function aiSdkModel(turns: Result[]): MockLanguageModelV3 {
  return new MockLanguageModelV3({ doGenerate: turns });
}

type Result = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** A model turn that calls tools. */
export function aiSdkCallTools(...calls: [name: string, input: Record<string, unknown>][]): Result {
  return {
    content: calls.map(([toolName, input], i) => ({
      type: 'tool-call' as const,
      toolCallId: `call_${i}`,
      toolName,
      input: JSON.stringify(input),
    })),
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage,
    warnings: [],
  };
}

/** A final answer. */
export function aiSdkAnswer(text: string): Result {
  return {
    content: [{ type: 'text', text }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage,
    warnings: [],
  };
}

/** The tool results the model was sent in its `turn`-th request (0-based), by tool call id. */
export function aiSdkToolResultsSent(model: MockLanguageModelV3, turn: number): Record<string, unknown> {
  const prompt = model.doGenerateCalls[turn]?.prompt ?? [];
  const out: Record<string, unknown> = {};
  for (const message of prompt) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) if (part.type === 'tool-result') out[part.toolCallId] = part.output;
  }
  return out;
}

// ---- OpenAI Agents SDK ----------------------------------------------------------------------------------

/** A model that answers from a list of turns and records what it was sent. */
export class ScriptedAgentsModel implements Model {
  readonly requests: ModelRequest[] = [];
  readonly #turns: AgentOutputItem[][];

  constructor(turns: AgentOutputItem[][]) {
    this.#turns = [...turns];
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const output = this.#turns.shift();
    if (output === undefined) throw new Error('The script has no more turns.');
    return { usage: new Usage(), output };
  }

  // biome-ignore lint/correctness/useYield: the scripted model does not stream; a run that asks fails loudly.
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('The scripted model does not stream.');
  }
}

export function agentsCallTools(
  ...calls: [id: string, name: string, args: Record<string, unknown>][]
): AgentOutputItem[] {
  return calls.map(([callId, name, args]) => ({
    type: 'function_call',
    callId,
    name,
    arguments: JSON.stringify(args),
    status: 'completed',
  }));
}

export function agentsAnswer(text: string): AgentOutputItem[] {
  return [
    { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text }] },
  ];
}

/** The outputs of tool calls the model was sent in a request, by call id. */
export function agentsToolOutputsSent(request: ModelRequest | undefined): Record<string, unknown> {
  const items = typeof request?.input === 'string' ? [] : (request?.input ?? []);
  const out: Record<string, unknown> = {};
  for (const item of items as AgentInputItem[]) {
    if (item.type === 'function_call_result') out[item.callId] = item.output;
  }
  return out;
}

// ---- Mastra ---------------------------------------------------------------------------------------------

export type MastraModel = ConstructorParameters<typeof MastraAgent>[0]['model'];

export interface MastraCall {
  prompt: { role: string; content: unknown }[];
}
/** One scripted model turn: tool calls, or a final answer. */
export type MastraTurn =
  | { calls: [id: string, name: string, args: Record<string, unknown>][] }
  | { text: string };

const v2Usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };

/**
 * A LanguageModelV2 that answers one scripted turn per call (Mastra's `generate` asks `doGenerate`, `stream`
 * asks `doStream`) and records the prompts it was sent.
 */
export function mastraModel(turns: MastraTurn[]) {
  const calls: MastraCall[] = [];
  const next = (options: MastraCall): MastraTurn => {
    calls.push({ prompt: options.prompt });
    const turn = turns.shift();
    if (turn === undefined) throw new Error('The script has no more turns.');
    return turn;
  };
  const contentOf = (turn: MastraTurn) =>
    'text' in turn
      ? [{ type: 'text' as const, text: turn.text }]
      : turn.calls.map(([toolCallId, toolName, args]) => ({
          type: 'tool-call' as const,
          toolCallId,
          toolName,
          input: JSON.stringify(args),
        }));
  const model = {
    specificationVersion: 'v2' as const,
    provider: 'scripted',
    modelId: 'scripted',
    supportedUrls: {},
    async doGenerate(options: MastraCall) {
      const turn = next(options);
      return {
        content: contentOf(turn),
        finishReason: 'text' in turn ? ('stop' as const) : ('tool-calls' as const),
        usage: v2Usage,
        warnings: [],
      };
    },
    async doStream(options: MastraCall) {
      const turn = next(options);
      const parts: Record<string, unknown>[] = [
        { type: 'stream-start', warnings: [] },
        ...('text' in turn
          ? [
              { type: 'text-start', id: 't' },
              { type: 'text-delta', id: 't', delta: turn.text },
              { type: 'text-end', id: 't' },
            ]
          : contentOf(turn)),
        { type: 'finish', finishReason: 'text' in turn ? 'stop' : 'tool-calls', usage: v2Usage },
      ];
      const stream = new ReadableStream<Record<string, unknown>>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      });
      return { stream };
    },
  };
  // A structural LanguageModelV2: its type lives in a package Mastra aliases (`@ai-sdk/provider-v5`).
  return { model: model as unknown as MastraModel, calls };
}

/** The tool results the model was sent in a prompt, by tool call id. */
export function mastraToolResultsSent(call: MastraCall | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const message of call?.prompt ?? []) {
    if (message.role !== 'tool' || !Array.isArray(message.content)) continue;
    for (const part of message.content as { type: string; toolCallId: string; output: unknown }[]) {
      if (part.type === 'tool-result') out[part.toolCallId] = part.output;
    }
  }
  return out;
}
