/**
 * The agent loop (issue 4, "agent.run"): the model sees the tools its capability set could allow and
 * proposes calls; each call is gated and run (several at once when the model asks for several); the string
 * results go back to the model; until a final answer or `maxTurns`. Tool errors and denials go back to the
 * model; only a model failure or cancellation rejects the run.
 */
import {
  type Context,
  context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { InterlockError, RequestCancelledError } from '../errors.js';
import type { AssistantMessage, ModelMessage, ModelProvider, ModelResponse } from '../providers/types.js';
import { ATTR, SPAN } from './telemetry.js';
import type { Toolbox } from './toolbox.js';
import type { RunInput, RunOptions, RunResult, RunStatus, RunStep } from './types.js';

/** Default model turns per run. */
export const DEFAULT_MAX_TURNS = 10;
/** Default tool calls run at once when the model proposes several. */
export const DEFAULT_MAX_PARALLEL_TOOL_CALLS = 8;

/** What one run needs. */
export interface LoopSettings {
  agent: string;
  model: ModelProvider;
  toolbox: Toolbox;
  instructions?: string | undefined;
  maxTurns: number;
  maxParallelToolCalls: number;
  tracer: Tracer;
  /** Extra attributes of the run span (e.g. the parent agent). */
  attributes?: Record<string, string> | undefined;
}

/** Runs the loop once. */
export async function runLoop(
  settings: LoopSettings,
  input: RunInput,
  options: RunOptions = {},
): Promise<RunResult> {
  const { tracer, model, agent, signal } = { ...settings, signal: options.signal };
  const messages: ModelMessage[] =
    typeof input === 'string' ? [{ role: 'user', content: input }] : [...input];
  const runSpan = tracer.startSpan(
    SPAN.run(agent),
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        [ATTR.OPERATION]: 'invoke_agent',
        [ATTR.AGENT_NAME]: agent,
        [ATTR.PROVIDER]: model.name,
        [ATTR.REQUEST_MODEL]: model.model,
        [ATTR.MAX_TURNS]: settings.maxTurns,
        ...settings.attributes,
      },
    },
    context.active(),
  );
  const runCtx = trace.setSpan(context.active(), runSpan);
  const steps: RunStep[] = [];
  const usage = { inputTokens: 0, outputTokens: 0 };
  let status: RunStatus = 'max_turns';
  let output = '';
  let turns = 0;
  try {
    while (turns < settings.maxTurns) {
      throwIfAborted(signal, agent);
      turns++;
      const turn = turns;
      const turnSpan = tracer.startSpan(SPAN.turn, { attributes: { [ATTR.TURN]: turn } }, runCtx);
      const turnCtx = trace.setSpan(runCtx, turnSpan);
      try {
        const response = await chat(settings, messages, turnCtx, signal);
        usage.inputTokens += response.usage?.inputTokens ?? 0;
        usage.outputTokens += response.usage?.outputTokens ?? 0;
        const assistant: AssistantMessage =
          response.toolCalls.length === 0
            ? { role: 'assistant', content: response.text }
            : { role: 'assistant', content: response.text, toolCalls: response.toolCalls };
        messages.push(assistant);
        output = response.text;
        if (response.toolCalls.length === 0) {
          status = 'completed';
          turnSpan.end();
          break;
        }
        const outcomes =
          turn >= settings.maxTurns
            ? response.toolCalls.map((call) =>
                settings.toolbox.skip(
                  call,
                  turn,
                  `The run reached maxTurns (${settings.maxTurns}), so this call was not run.`,
                ),
              )
            : await runAll(
                response.toolCalls.map(
                  (call) => () => settings.toolbox.execute(call, turn, { signal, parent: turnCtx }),
                ),
                settings.maxParallelToolCalls,
              );
        for (const o of outcomes) {
          steps.push(o.step);
          messages.push(o.message);
        }
        turnSpan.end();
      } catch (err) {
        fail(turnSpan, err);
        throw err;
      }
    }
    throwIfAborted(signal, agent);
    runSpan.setAttributes({
      [ATTR.RUN_STATUS]: status,
      [ATTR.RUN_TURNS]: turns,
      [ATTR.RUN_TOOL_CALLS]: steps.length,
      [ATTR.INPUT_TOKENS]: usage.inputTokens,
      [ATTR.OUTPUT_TOKENS]: usage.outputTokens,
    });
    runSpan.end();
    return Object.freeze({
      output,
      status,
      turns,
      steps: Object.freeze(steps),
      messages: Object.freeze(messages),
      usage: Object.freeze(usage),
    });
  } catch (err) {
    const error = signal?.aborted && !(err instanceof RequestCancelledError) ? cancelled(agent, err) : err;
    fail(runSpan, error);
    throw error;
  }
}

async function chat(
  settings: LoopSettings,
  messages: readonly ModelMessage[],
  parent: Context,
  signal: AbortSignal | undefined,
): Promise<ModelResponse> {
  const { model, tracer } = settings;
  const tools = settings.toolbox.visible();
  const span = tracer.startSpan(
    SPAN.chat(model.model),
    {
      kind: SpanKind.CLIENT,
      attributes: {
        [ATTR.OPERATION]: 'chat',
        [ATTR.PROVIDER]: model.name,
        [ATTR.REQUEST_MODEL]: model.model,
      },
    },
    parent,
  );
  try {
    const response = await context.with(trace.setSpan(parent, span), () =>
      model.generate({ instructions: settings.instructions, messages: [...messages], tools, signal }),
    );
    span.setAttributes({
      [ATTR.FINISH_REASONS]: [response.finishReason],
      ...(response.model === undefined ? {} : { [ATTR.RESPONSE_MODEL]: response.model }),
      ...(response.responseId === undefined ? {} : { [ATTR.RESPONSE_ID]: response.responseId }),
      ...(response.usage?.inputTokens === undefined
        ? {}
        : { [ATTR.INPUT_TOKENS]: response.usage.inputTokens }),
      ...(response.usage?.outputTokens === undefined
        ? {}
        : { [ATTR.OUTPUT_TOKENS]: response.usage.outputTokens }),
    });
    span.end();
    return response;
  } catch (err) {
    fail(span, err);
    throw err;
  }
}

/** Runs `tasks` with at most `limit` at once; results keep the tasks' order. */
async function runAll<T>(tasks: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results = new Array<T>(tasks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await (tasks[i] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

function throwIfAborted(signal: AbortSignal | undefined, agent: string): void {
  if (signal?.aborted) throw cancelled(agent, signal.reason);
}

function cancelled(agent: string, cause: unknown): RequestCancelledError {
  return new RequestCancelledError(`The run of agent '${agent}' was cancelled.`, { cause });
}

function fail(span: Span, err: unknown): void {
  span.setAttribute(
    ATTR.ERROR_TYPE,
    err instanceof InterlockError ? err.code : err instanceof Error ? err.name : 'Error',
  );
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  span.end();
}
