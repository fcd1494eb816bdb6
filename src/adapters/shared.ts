/**
 * What every framework adapter shares (issue 18, "Adapters"): which tools it hands out, and one gated call
 * that never bypasses the manager. Each adapter only maps these to its framework's tool object; the
 * capability check, argument validation, audit and result normalization all stay in the manager's call path.
 */
import { ToolInputError } from '../errors.js';
import type { McpCallOptions } from '../interop/flow-context.js';
import type { FlowState } from '../security/flow.js';
import type { CheckContext } from '../security/types.js';
import { type ClassifiedCallError, classifyCallError } from '../session/call-errors.js';
import { type MediaContent, resultMedia } from '../tools/media.js';
import type { ToolCallResult } from '../tools/normalize.js';
import type { ToolDefinition, ToolWrapper } from '../tools/tool-wrapper.js';

/**
 * Where an adapter takes its tools from and calls them through. An `MCPClientManager` is one as it is; calls
 * go through its `callTool`, so its capability set decides every call.
 */
export interface AdapterToolSource {
  /** Every tool the source exposes. */
  readonly tools: readonly ToolWrapper[];
  /** The tools its capability set could allow for `context`. */
  visibleTools(context?: CheckContext): readonly ToolWrapper[];
  callTool(
    name: string,
    args: Record<string, unknown> | undefined,
    options?: McpCallOptions,
  ): Promise<ToolCallResult>;
}

/** Options every adapter takes. */
export interface AdapterOptions {
  /**
   * Which tools to hand out: `visible`, the tools the capability set could allow (a model is not shown tools it
   * can never call); `all`, every tool. Either way each call is checked when it is made.
   * @default 'visible'
   */
  tools?: 'visible' | 'all' | undefined;
  /** Keeps only the tools for which it returns true (e.g. one server's). @default every tool */
  filter?: ((tool: ToolDefinition) => boolean) | undefined;
  /** The agent the calls are made for: rule conditions and audit records see it. @default the manager's */
  agent?: string | undefined;
  /** Who the agent acts for (a tenant or user): shared quotas and audit see it. @default the manager's */
  principal?: string | undefined;
  /** Timeout of each call in ms. @default the server's `timeoutMs` */
  timeoutMs?: number | undefined;
  /**
   * The flow state the calls are decided in and record into (issue 42): give each agent of the framework its own
   * (`new FlowState()`, or an Interlock agent's `agent.flow`), so what one agent read never decides another's calls.
   * @default the source's: the manager's own `flow`, or a view's
   */
  flow?: FlowState | undefined;
}

/** Options of the adapters whose framework can show a model images and audio. */
export interface MediaAdapterOptions extends AdapterOptions {
  /**
   * What the model is given: `text`, the result as one string (images and audio as placeholders such as
   * `[image: image/png, 1.2 KB]`); `content`, that string followed by the result's images and audio as the
   * framework's media parts, for vision- or audio-capable models.
   * @default 'text'
   */
  toolResults?: 'text' | 'content' | undefined;
}

/** The tools an adapter hands out, in the source's order. */
export function adapterTools(source: AdapterToolSource, options: AdapterOptions): ToolDefinition[] {
  const wrappers =
    options.tools === 'all'
      ? source.tools
      : source.visibleTools({ agent: options.agent, principal: options.principal });
  const definitions = wrappers.map((w) => w.definition);
  return options.filter === undefined ? definitions : definitions.filter(options.filter);
}

/** A call made for a framework: its result, or what went wrong in words the model can act on. */
export type AdapterCallOutcome =
  | { readonly ok: true; readonly result: ToolCallResult }
  | ({ readonly ok: false; readonly error: unknown } & ClassifiedCallError);

/**
 * Calls `name` through the source (gate, validation, limits, audit, normalization) and never rejects: a
 * denial or failure comes back classified, with the text the model is told.
 */
export async function callForModel(
  source: AdapterToolSource,
  name: string,
  args: unknown,
  options: AdapterOptions,
  signal: AbortSignal | undefined,
): Promise<AdapterCallOutcome> {
  try {
    const result = await source.callTool(name, toArguments(name, args), {
      signal,
      agent: options.agent,
      principal: options.principal,
      timeoutMs: options.timeoutMs,
      flow: options.flow,
    });
    return { ok: true, result };
  } catch (error) {
    return { ok: false, error, ...classifyCallError(error) };
  }
}

/** The images and audio of a result with `toolResults: 'content'`; none otherwise (the default stays lean). */
export function mediaFor(options: MediaAdapterOptions, result: ToolCallResult): MediaContent[] {
  return options.toolResults === 'content' ? resultMedia(result.content) : [];
}

/**
 * A framework's tool input as call arguments. Frameworks hand over the parsed JSON object; a missing input is
 * no arguments, and anything else (a model that wrote `5` or a string) is refused here, as the manager's schema
 * validation would refuse it, with a message the model can act on.
 */
function toArguments(name: string, input: unknown): Record<string, unknown> | undefined {
  if (input === undefined || input === null) return undefined;
  if (typeof input === 'object' && !Array.isArray(input)) return input as Record<string, unknown>;
  throw new ToolInputError(name, [{ field: '', message: `must be a JSON object, not ${describe(input)}` }]);
}

function describe(value: unknown): string {
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}
