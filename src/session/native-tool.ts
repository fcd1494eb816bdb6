/**
 * Native tools (issue 4, "Engine"): tools written in TypeScript with a zod schema, shown to the model beside
 * MCP tools and gated the same way, on the resource `tool:{name}` with the action `execute`.
 */
import type { Span } from '@opentelemetry/api';
import { z } from 'zod';
import { ConfigError, RequestCancelledError, ToolInputError } from '../errors.js';
import {
  type CallFlow,
  callFlow,
  type FlowLabelResolver,
  recordFlow,
  toolResultText,
} from '../interop/flow-context.js';
import { authorizeStage, givenSpan, invocationPipeline } from '../interop/pipeline.js';
import type { FlowState } from '../security/flow.js';
import type { CapabilityGate } from '../security/gate.js';
import { resourceFor } from '../security/pattern.js';
import { type ToolCallResult, toToolCallResult } from '../tools/normalize.js';
import type { ToolAnnotations } from '../tools/tool-wrapper.js';
import { type NativeCalls, nativeRecorder, type ObservedCall } from './native-calls.js';

/** Native tool names: what both model APIs accept, and never the `mcp__` namespace of MCP tools. */
export const NATIVE_TOOL_NAME_RE = /^[A-Za-z0-9_-]{1,64}$/;

/** What a native tool's `execute` is given besides its arguments. */
export interface NativeToolContext {
  /** Aborts when the run (or the direct call) is cancelled. */
  readonly signal?: AbortSignal | undefined;
  /** The agent calling. */
  readonly agent: string;
  /** The model's id for this call, or `direct` for `agent.callTool`. */
  readonly callId: string;
}

/** What {@link defineTool} takes. */
export interface DefineToolOptions<S extends z.ZodObject> {
  /** Model-facing name: 1-64 of `[A-Za-z0-9_-]`, not starting with `mcp__`. Its resource is `tool:{name}`. */
  name: string;
  description: string;
  /** The arguments, as a zod object schema; sent to the model as JSON Schema. @default no arguments */
  input?: S | undefined;
  /** Hints, as for MCP tools (a policy may deny on them). */
  annotations?: ToolAnnotations | undefined;
  /**
   * Does the work. A string is the result as is; anything else is sent as JSON (an MCP `CallToolResult`
   * shape is read as one). A throw becomes an error result (`isError: true`) the model can act on.
   */
  execute: (args: z.output<S>, context: NativeToolContext) => unknown;
}

/** A native tool, ready to give to an agent. */
export interface NativeTool {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments (from the zod schema). */
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly annotations?: ToolAnnotations | undefined;
  /** `tool:{name}`: what capability rules name. */
  readonly resource: string;
  /**
   * Validates `args` and runs the tool, without any capability check: agents gate every call before this.
   * Throws `ToolInputError` for bad arguments and `RequestCancelledError` when cancelled.
   */
  invoke(
    args: unknown,
    context: NativeToolContext,
    options?: { maxResultChars?: number },
  ): Promise<ToolCallResult>;
}

/** Defines a native tool. Throws `ConfigError` for a bad name or a non-object schema. */
export function defineTool<S extends z.ZodObject = z.ZodObject<Record<string, never>>>(
  options: DefineToolOptions<S>,
): NativeTool {
  const { name, description, annotations } = options;
  if (typeof name !== 'string' || !NATIVE_TOOL_NAME_RE.test(name) || name.startsWith('mcp__')) {
    throw new ConfigError(
      `Invalid native tool name ${JSON.stringify(name)}: use 1-64 characters of A-Z, a-z, 0-9, _ and -, not starting with 'mcp__' (MCP tools use that prefix).`,
      { issues: [{ path: 'name', message: 'invalid native tool name' }] },
    );
  }
  if (typeof options.execute !== 'function') {
    throw new ConfigError(`Native tool '${name}' has no execute function.`, {
      issues: [{ path: 'execute', message: 'must be a function' }],
    });
  }
  const schema: z.ZodObject = options.input ?? z.object({});
  if (!(schema instanceof z.ZodObject)) {
    throw new ConfigError(
      `The input of native tool '${name}' must be a zod object schema (z.object({...})).`,
      {
        issues: [{ path: 'input', message: 'must be a z.object schema' }],
      },
    );
  }
  const { $schema: _dialect, ...inputSchema } = z.toJSONSchema(schema, { io: 'input' }) as Record<
    string,
    unknown
  >;
  const execute = options.execute as (args: unknown, context: NativeToolContext) => unknown;
  return Object.freeze({
    name,
    description,
    inputSchema: Object.freeze(inputSchema),
    annotations: annotations === undefined ? undefined : Object.freeze({ ...annotations }),
    resource: resourceFor.nativeTool(name),
    async invoke(args: unknown, context: NativeToolContext, invokeOptions: { maxResultChars?: number } = {}) {
      const parsed = schema.safeParse(args ?? {});
      if (!parsed.success) {
        throw new ToolInputError(
          name,
          parsed.error.issues.map((issue) => ({
            field: issue.path.length === 0 ? '' : `/${issue.path.map(String).join('/')}`,
            message: issue.message,
          })),
        );
      }
      let value: unknown;
      try {
        value = await execute(parsed.data, context);
      } catch (err) {
        if (context.signal?.aborted) {
          throw new RequestCancelledError(`Native tool '${name}' was cancelled.`, { cause: err });
        }
        const message = err instanceof Error ? err.message : String(err);
        return toToolCallResult({ isError: true, content: [{ type: 'text', text: message }] }, invokeOptions);
      }
      const raw = typeof value === 'string' ? { content: [{ type: 'text', text: value }] } : value;
      return toToolCallResult(raw, invokeOptions);
    },
  });
}

/** One native tool call as it passes the invocation pipeline. */
interface NativeInvocation extends ObservedCall {
  readonly tool: NativeTool;
  readonly args: Record<string, unknown>;
  readonly context: NativeToolContext;
  readonly maxResultChars: number | undefined;
  /** The agent's flow (issue 42), when it has one: the result is recorded into it with the tool's content labels. */
  readonly flow: CallFlow | undefined;
}

/** The terminal: the tool runs, and what the model reads of its result enters the agent's flow (issue 42). */
function invokeNative(ctx: NativeInvocation): Promise<ToolCallResult> {
  const running = ctx.tool.invoke(ctx.args, ctx.context, { maxResultChars: ctx.maxResultChars });
  const flow = ctx.flow;
  if (flow === undefined || flow.content.length === 0) return running;
  return running.then((result) => {
    recordFlow(flow, ctx.tool.resource, result, toolResultText);
    return result;
  });
}

/**
 * Native tool calls, through the one invocation pipeline (issue 43): the agent's `execute_tool` span is the trace
 * (made by the toolbox, which spans MCP and native calls alike); a refusal is counted and reported
 * (`tool_call_denied`); the gate decides and its decision goes on that span; the call is counted and reported as
 * MCP tool calls are (native-calls.ts); and `invoke` is the terminal (it validates the arguments with the zod
 * schema). Nothing held: a call slot bounds the calls sent to one server, and a native tool has none (an agent runs
 * at most `maxParallelToolCalls` calls of a turn at once); the tool is given the caller's signal as it is.
 */
const nativePipeline = invocationPipeline({
  trace: givenSpan<NativeInvocation, ToolCallResult>,
  record: nativeRecorder<NativeInvocation>(),
  authorize: authorizeStage,
  terminal: invokeNative,
});

/** Calls `tool` through the pipeline, gated by `gate`, its decision recorded on `span`, counted in `calls`. */
export function callNativeTool(
  tool: NativeTool,
  args: Record<string, unknown>,
  settings: {
    gate: CapabilityGate;
    span: Span | undefined;
    context: NativeToolContext;
    calls: NativeCalls;
    maxResultChars?: number | undefined;
    /** The agent's flow state: the call is decided in it, and its result recorded into it. */
    flow?: FlowState | undefined;
    /** Resolves the tool's labels; none: labels unknown, nothing recorded. */
    flowLabels?: FlowLabelResolver | undefined;
  },
): Promise<ToolCallResult> {
  const { context } = settings;
  const flow =
    settings.flow === undefined
      ? undefined
      : callFlow(settings.flow, settings.flowLabels, tool.resource, tool.annotations);
  return nativePipeline({
    kind: 'native',
    request: {
      resource: tool.resource,
      action: 'execute',
      context: {
        args,
        agent: context.agent,
        annotations: tool.annotations,
        flow: flow?.flow,
        labels: flow?.labels,
      },
      tool: tool.name,
    },
    gate: settings.gate,
    signal: context.signal,
    span: settings.span,
    spanContext: undefined,
    decision: undefined,
    revision: 0,
    invalid: undefined,
    sent: false,
    calls: settings.calls,
    name: tool.name,
    callId: 0,
    tool,
    args,
    context,
    maxResultChars: settings.maxResultChars,
    flow,
  });
}
