/**
 * An agent's tools: its MCP tools (through the manager, or a gated view of a shared one) and its native
 * tools, behind one gate each and one way to call them. Calls made for the model never throw: a denial or a
 * failure becomes a clear error string the model can act on, and a {@link RunStep} for the caller.
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
import { ConfigError, InterlockError, PermissionDeniedError } from '../errors.js';
import type { FlowLabelResolver } from '../interop/flow-context.js';
import type { ModelToolCall, ModelToolDefinition, ToolResultMessage } from '../providers/types.js';
import type { CapabilitySet } from '../security/capability-set.js';
import type { FlowState } from '../security/flow.js';
import type { CapabilityGate } from '../security/gate.js';
import { resourceFor } from '../security/pattern.js';
import { type MediaContent, resultMedia } from '../tools/media.js';
import type { ToolCallResult } from '../tools/normalize.js';
import { classifyCallError as classify } from './call-errors.js';
import type { McpToolAccess } from './gated-view.js';
import { NativeCalls } from './native-calls.js';
import { callNativeTool, type NativeTool } from './native-tool.js';
import { ATTR, SPAN } from './telemetry.js';
import type { AgentCallOptions, RunStep, StepDecision, ToolDescriptor } from './types.js';

/** What a {@link Toolbox} is built from. */
export interface ToolboxOptions {
  agent: string;
  mcp: McpToolAccess;
  /** The agent's flow state (issue 42): every call, MCP and native, is decided in it and records into it. */
  flow: FlowState;
  /** The labels of native tools (MCP tools' are the manager's to resolve). @default none */
  flowLabels?: FlowLabelResolver | undefined;
  native: readonly NativeTool[];
  /** The set native tools are checked against (the MCP side has its own gate). */
  capabilities: CapabilitySet;
  /** The gate of native tools. */
  gate: CapabilityGate;
  tracer: Tracer;
  maxResultChars?: number | undefined;
  /** `content`: MCP tool results carry their images and audio to the model too. @default 'text' */
  toolResults?: 'text' | 'content' | undefined;
}

/** One executed (or refused) model tool call. */
export interface ToolOutcome {
  readonly step: RunStep;
  readonly message: ToolResultMessage;
}

interface CallSettings {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  callId: string;
}

/** An agent's MCP and native tools. */
export class Toolbox {
  readonly #o: ToolboxOptions;
  readonly #native = new Map<string, NativeTool>();
  /** The native tools' figures and the agent's events. */
  readonly nativeCalls: NativeCalls;

  constructor(options: ToolboxOptions) {
    this.#o = options;
    for (const tool of options.native) {
      if (this.#native.has(tool.name)) {
        throw new ConfigError(`Two native tools are named '${tool.name}'; names must be unique.`, {
          issues: [{ path: 'tools', message: `duplicate name '${tool.name}'` }],
        });
      }
      this.#native.set(tool.name, tool);
    }
    this.nativeCalls = new NativeCalls(this.#native.keys());
  }

  /** Every tool, MCP first, as plain data. */
  list(): ToolDescriptor[] {
    const mcp = this.#o.mcp.tools.map(
      (w): ToolDescriptor =>
        Object.freeze({
          name: w.name,
          description: w.description,
          inputSchema: w.inputSchema,
          annotations: w.annotations,
          source: 'mcp',
          server: w.server,
          tool: w.tool,
          resource: resourceFor.tool(w.server, w.tool),
          offline: w.offline,
        }),
    );
    const native = [...this.#native.values()].map(
      (t): ToolDescriptor =>
        Object.freeze({
          name: t.name,
          description: t.description,
          inputSchema: t.inputSchema,
          annotations: t.annotations,
          source: 'native',
          resource: t.resource,
          offline: false,
        }),
    );
    return [...mcp, ...native];
  }

  /** The tools the capability set could allow: what the model is shown. Each call is still checked. */
  visible(): ModelToolDefinition[] {
    const agent = this.#o.agent;
    const mcp = this.#o.mcp.visibleTools({ agent });
    const native = [...this.#native.values()].filter((t) =>
      this.#o.capabilities.couldAllow(t.resource, 'execute', { agent, annotations: t.annotations }),
    );
    return [...mcp, ...native].map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
    }));
  }

  /** A direct, gated call (`agent.callTool`): throws on a denial or failure, like the manager's `callTool`. */
  async call(name: string, args: Record<string, unknown> | undefined, options: AgentCallOptions = {}) {
    const span = this.#startSpan(name, 'direct', context.active());
    try {
      const result = await this.#run(span, name, args ?? {}, { ...options, callId: 'direct' });
      this.#endSpan(span, 'allow', result, undefined);
      return result;
    } catch (err) {
      this.#endSpan(span, classify(err).decision, undefined, err);
      throw err;
    }
  }

  /** Runs one tool call the model proposed. Never rejects. */
  async execute(
    call: ModelToolCall,
    turn: number,
    options: { signal?: AbortSignal | undefined; parent: Context },
  ): Promise<ToolOutcome> {
    const started = performance.now();
    const source = this.#sourceOf(call.name);
    const server = source === 'mcp' ? this.#o.mcp.getTool(call.name)?.server : undefined;
    const span = this.#startSpan(call.name, call.id, options.parent);
    const base = { turn, callId: call.id, tool: call.name, source, server, arguments: call.arguments };
    let step: RunStep;
    let media: MediaContent[] = [];
    if (call.argumentsError !== undefined) {
      const reason = `The arguments for '${call.name}' were not usable: ${call.argumentsError}.`;
      step = {
        ...base,
        decision: 'skipped',
        reason,
        isError: true,
        durationMs: performance.now() - started,
        output: `Error: ${reason} Call the tool again with a JSON object that matches its input schema.`,
      };
      this.#endSpan(span, 'skipped', undefined, new Error(reason));
    } else {
      try {
        const result = await this.#run(
          span,
          call.name,
          { ...call.arguments },
          {
            signal: options.signal,
            callId: call.id,
          },
        );
        if (this.#o.toolResults === 'content') media = resultMedia(result.content);
        step = {
          ...base,
          decision: 'allow',
          isError: result.isError,
          durationMs: performance.now() - started,
          output: result.text,
        };
        this.#endSpan(span, 'allow', result, undefined);
      } catch (err) {
        const c = classify(err);
        step = {
          ...base,
          decision: c.decision,
          reason: c.reason,
          ruleId: c.ruleId,
          code: c.code,
          isError: true,
          durationMs: performance.now() - started,
          output: c.output,
        };
        this.#endSpan(span, c.decision, undefined, err);
      }
    }
    return {
      step: Object.freeze(step),
      message: {
        role: 'tool',
        toolCallId: call.id,
        toolName: call.name,
        content: step.output,
        isError: step.isError,
        ...(media.length === 0 ? {} : { media }),
      },
    };
  }

  /** A call that is answered without being run (e.g. `maxTurns` reached), so the conversation stays valid. */
  skip(call: ModelToolCall, turn: number, reason: string): ToolOutcome {
    const source = this.#sourceOf(call.name);
    const output = `Error: ${reason}`;
    const step: RunStep = Object.freeze({
      turn,
      callId: call.id,
      tool: call.name,
      source,
      server: source === 'mcp' ? this.#o.mcp.getTool(call.name)?.server : undefined,
      arguments: call.arguments,
      decision: 'skipped',
      reason,
      durationMs: 0,
      isError: true,
      output,
    });
    return {
      step,
      message: { role: 'tool', toolCallId: call.id, toolName: call.name, content: output, isError: true },
    };
  }

  #sourceOf(name: string): RunStep['source'] {
    if (this.#native.has(name)) return 'native';
    return this.#o.mcp.getTool(name) === undefined ? 'unknown' : 'mcp';
  }

  #run(
    span: Span,
    name: string,
    args: Record<string, unknown>,
    settings: CallSettings,
  ): Promise<ToolCallResult> {
    const active = trace.setSpan(context.active(), span);
    return context.with(active, () => {
      const native = this.#native.get(name);
      const agent = this.#o.agent;
      if (native === undefined) {
        // The manager's `tools/call` span is a child of this one, with or without a context manager.
        const options = {
          signal: settings.signal,
          timeoutMs: settings.timeoutMs,
          agent,
          traceContext: active,
          flow: this.#o.flow,
        };
        return this.#o.mcp.callTool(name, args, options);
      }
      // The decision goes on this span (issue 15: one event per decision, recorded where it is made).
      return callNativeTool(native, args, {
        gate: this.#o.gate,
        span,
        context: { signal: settings.signal, agent, callId: settings.callId },
        flow: this.#o.flow,
        flowLabels: this.#o.flowLabels,
        calls: this.nativeCalls,
        maxResultChars: this.#o.maxResultChars,
      });
    });
  }

  #startSpan(name: string, callId: string, parent: Context): Span {
    const native = this.#native.get(name);
    const wrapper = native === undefined ? this.#o.mcp.getTool(name) : undefined;
    return this.#o.tracer.startSpan(
      SPAN.tool(name),
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          [ATTR.OPERATION]: 'execute_tool',
          [ATTR.TOOL_NAME]: name,
          [ATTR.TOOL_CALL_ID]: callId,
          [ATTR.AGENT_NAME]: this.#o.agent,
          // GenAI conventions: `function` runs in the client app, `extension` calls out to an external system.
          [ATTR.TOOL_TYPE]: native === undefined ? 'extension' : 'function',
          ...(wrapper === undefined ? {} : { [ATTR.SERVER]: wrapper.server, [ATTR.TOOL]: wrapper.tool }),
        },
      },
      parent,
    );
  }

  #endSpan(span: Span, decision: StepDecision, result: ToolCallResult | undefined, error: unknown): void {
    span.setAttribute(ATTR.DECISION, decision);
    if (result !== undefined) {
      span.setAttribute(ATTR.RESULT_CHARS, result.text.length);
      span.setAttribute(ATTR.TOOL_IS_ERROR, result.isError);
      if (result.isError) {
        span.setAttribute(ATTR.ERROR_TYPE, 'tool_error');
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'The tool reported an error.' });
      }
    }
    if (error !== undefined) {
      const code =
        error instanceof InterlockError ? error.code : error instanceof Error ? error.name : 'Error';
      span.setAttribute(ATTR.ERROR_TYPE, code);
      if (error instanceof PermissionDeniedError && error.rule !== undefined)
        span.setAttribute(ATTR.RULE_ID, error.rule.id);
      // The message may quote a denial reason, never argument values (our errors name fields, not values).
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: error instanceof Error ? error.message : String(error),
      });
    }
    span.end();
  }
}
