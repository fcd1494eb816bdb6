/**
 * A deterministic model for tests, demos and offline use: it answers from a script instead of an API.
 * A script is a list of steps, one per model turn (a final answer, tool calls, or a function that decides
 * from the conversation), or one function for every turn.
 */
import { RequestCancelledError } from '../errors.js';
import { ModelProviderError } from './errors.js';
import type {
  ModelMessage,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ModelToolCall,
  ModelToolDefinition,
  ToolResultMessage,
} from './types.js';

/** A tool call in a script. */
export interface ScriptedToolCall {
  /** The model-facing name: `mcp__notes__read_note`, or a native tool's name. */
  readonly name: string;
  readonly arguments?: Readonly<Record<string, unknown>> | undefined;
  /** @default `call_{turn}_{index}` */
  readonly id?: string | undefined;
}

/** One model turn: tool calls (run in parallel), text, or both. No tool calls means a final answer. */
export interface ScriptedTurn {
  readonly text?: string | undefined;
  readonly toolCalls?: readonly ScriptedToolCall[] | undefined;
}

/** What a script function sees. */
export interface ScriptContext {
  /** 1 for the first model turn of the conversation, 2 for the next, ... */
  readonly turn: number;
  readonly request: ModelRequest;
  /** The tool results since the model last spoke (the answers to its last tool calls). */
  readonly toolResults: readonly ToolResultMessage[];
  /** The names of the tools the model was shown this turn. */
  readonly toolNames: readonly string[];
}

/** A function of the conversation that returns the next turn. */
export type ScriptFunction = (context: ScriptContext) => ScriptStep | Promise<ScriptStep>;

/** A step of a script: a string is a final answer. */
export type ScriptStep = string | ScriptedTurn | ScriptFunction;

/** A request as the scripted model received it (without its signal). */
export interface RecordedRequest {
  readonly instructions?: string | undefined;
  readonly messages: readonly ModelMessage[];
  readonly tools: readonly ModelToolDefinition[];
}

/** Options of {@link ScriptedProvider}. */
export interface ScriptedProviderOptions {
  /** Reported as the model name. @default 'scripted' */
  model?: string | undefined;
}

/** A model that answers from a script. */
export class ScriptedProvider implements ModelProvider {
  readonly name = 'scripted';
  readonly model: string;
  readonly #script: readonly ScriptStep[] | ScriptFunction;
  readonly #requests: RecordedRequest[] = [];

  constructor(script: readonly ScriptStep[] | ScriptFunction, options: ScriptedProviderOptions = {}) {
    this.#script = typeof script === 'function' ? script : [...script];
    this.model = options.model ?? 'scripted';
  }

  /** Every request received so far, in order: what the model was shown (tools) and told (messages). */
  get requests(): readonly RecordedRequest[] {
    return this.#requests;
  }

  /** Forgets the recorded requests. */
  reset(): void {
    this.#requests.length = 0;
  }

  async generate(request: ModelRequest): Promise<ModelResponse> {
    throwIfAborted(request.signal);
    this.#requests.push(
      Object.freeze({
        instructions: request.instructions,
        messages: Object.freeze([...request.messages]),
        tools: Object.freeze([...request.tools]),
      }),
    );
    // The turn comes from the conversation, not from a counter: runs of one agent do not share a position.
    const turn = request.messages.filter((m) => m.role === 'assistant').length + 1;
    const context: ScriptContext = {
      turn,
      request,
      toolResults: trailingToolResults(request.messages),
      toolNames: request.tools.map((t) => t.name),
    };
    let step: ScriptStep | undefined;
    if (typeof this.#script === 'function') {
      step = this.#script;
    } else {
      step = this.#script[turn - 1];
      if (step === undefined) {
        throw new ModelProviderError(
          `The scripted model has no step for turn ${turn} (the script has ${this.#script.length}). ` +
            'End the script with a final answer (a string), or give the agent a lower maxTurns.',
          { provider: this.name },
        );
      }
    }
    for (let depth = 0; typeof step === 'function'; depth++) {
      if (depth > 8)
        throw new ModelProviderError('A script function kept returning functions.', { provider: this.name });
      step = await step(context);
    }
    throwIfAborted(request.signal);
    return toResponse(step, turn);
  }
}

/** A scripted model: `scriptedModel(['Hello'])`, `scriptedModel([useTool('mcp__a__b', { x: 1 }), 'done'])`. */
export function scriptedModel(
  script: readonly ScriptStep[] | ScriptFunction,
  options: ScriptedProviderOptions = {},
): ScriptedProvider {
  return new ScriptedProvider(script, options);
}

/** A step that calls one tool. */
export function useTool(name: string, args: Readonly<Record<string, unknown>> = {}, text = ''): ScriptedTurn {
  return { text, toolCalls: [{ name, arguments: args }] };
}

/** A step that calls several tools in one turn (the agent runs them in parallel). */
export function useTools(
  ...calls: readonly (ScriptedToolCall | readonly [string, Record<string, unknown>?])[]
): ScriptedTurn {
  return {
    toolCalls: calls.map((c) => (isTuple(c) ? { name: c[0], arguments: c[1] ?? {} } : c)),
  };
}

function isTuple(
  c: ScriptedToolCall | readonly [string, Record<string, unknown>?],
): c is readonly [string, Record<string, unknown>?] {
  return Array.isArray(c);
}

function toResponse(step: string | ScriptedTurn, turn: number): ModelResponse {
  if (typeof step === 'string') return { text: step, toolCalls: [], finishReason: 'stop' };
  const toolCalls: ModelToolCall[] = (step.toolCalls ?? []).map((c, i) => ({
    id: c.id ?? `call_${turn}_${i}`,
    name: c.name,
    arguments: { ...(c.arguments ?? {}) },
  }));
  return { text: step.text ?? '', toolCalls, finishReason: toolCalls.length > 0 ? 'tool_calls' : 'stop' };
}

function trailingToolResults(messages: readonly ModelMessage[]): ToolResultMessage[] {
  const out: ToolResultMessage[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== 'tool') break;
    out.unshift(m);
  }
  return out;
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw new RequestCancelledError('The request to the scripted model was cancelled.', {
      cause: signal.reason,
    });
  }
}
