/**
 * Information flow on the invocation pipeline (issue 42, design CONTRACT 4): which flow state a call is made in,
 * the labels of what it calls or reads (its target), and what its result records into that state.
 *
 * - Before the gate decides, the call's check context gets `flow` (the session's state) and `labels` (the target's
 *   content and sink labels), so flow conditions and `when` functions see both.
 * - After the call, what the model reads of the result (a tool's text and structured content, a resource's text,
 *   a prompt's messages) is recorded into `flow` with the target's content labels. A target without content labels
 *   records nothing, so a session without labels pays one length check per call.
 */
import type { GetPromptResult, ReadResourceResult } from '@modelcontextprotocol/client';
import { ServerRequestError } from '../errors.js';
import type { InputRoundControl } from '../protocol/input-rounds.js';
import type { CapabilitySet } from '../security/capability-set.js';
import { type FlowState, stringsIn } from '../security/flow.js';
import type { FlowLabels, ServerLabels } from '../security/flow-labels.js';
import type { ToolHints } from '../security/types.js';
import type { ToolCallResult } from '../tools/normalize.js';
import type { ToolCallOptions } from '../tools/tool-wrapper.js';

/** A target's labels (issue 42, CONTRACT 2): what its results carry in, and what it is as a destination. */
export interface FlowTargetLabels {
  /** Recorded into the session with what the target returns (`private`, `untrusted`). */
  readonly content: readonly string[];
  /** What the target is as a destination (`egress`, `write`, `destructive`); never recorded. */
  readonly sink: readonly string[];
}

/**
 * Resolves the labels of a target (a resource name such as `mcp:mail:send_email`, `mcp-resource:docs:file:///a`,
 * `mcp-prompt:x:y`, `tool:name`) from its annotations and what the operator declared. Called on every call: cache
 * the answer per resource and annotations, and return the same object for the same answer (the union the
 * conditions see is kept per answer object).
 */
export interface FlowLabelResolver {
  labelsFor(resource: string, annotations?: ToolHints): FlowTargetLabels;
}

const NO_TARGET: FlowTargetLabels = Object.freeze({ content: Object.freeze([]), sink: Object.freeze([]) });

/** The labels the project file gives the servers a manager connected (`mcpServers.{name}.labels` and `sink`). */
export class ServerLabelBook {
  readonly #labels: Record<string, ServerLabels> = {};
  /** Moves whenever a server's labels are added. */
  version = 0;

  /** Notes a connected server's labels, if it has any. */
  add(server: { readonly name: string } & ServerLabels): void {
    if (server.labels === undefined && server.sink === undefined) return;
    this.#labels[server.name] = { labels: server.labels, sink: server.sink };
    this.version++;
  }

  get labels(): Readonly<Record<string, ServerLabels>> {
    return this.#labels;
  }
}

/**
 * The default resolver of a manager or view: the labels of `set`'s policy (its `labels` and `flow` sections, tool
 * annotations) and of the servers in `book`, while the set tracks flow ({@link CapabilitySet.tracksFlow}) or a server
 * is labeled; none otherwise, so calls under a policy without flow record nothing. A policy replaced later is followed.
 */
export function labelsOfSet(set: CapabilitySet, book?: ServerLabelBook): FlowLabelResolver {
  let base: FlowLabels | undefined;
  let version = -1;
  let withServers: FlowLabels | undefined;
  return {
    labelsFor(resource, annotations) {
      const labeled = book !== undefined && book.version > 0;
      if (!labeled && !set.tracksFlow) return NO_TARGET;
      const current = set.flowLabels;
      if (!labeled) return current.labelsFor(resource, annotations);
      if (current !== base || book.version !== version) {
        base = current;
        version = book.version;
        withServers = current.withServers(book.labels);
      }
      return (withServers as FlowLabels).labelsFor(resource, annotations);
    },
  };
}

/** Options of a tool call through the manager, a view or a session: {@link ToolCallOptions} and the flow state. */
export interface McpCallOptions extends ToolCallOptions {
  /**
   * The flow state the call is decided in and its result recorded into (an agent's, a sub-agent's).
   * @default the flow state of the manager or view the call goes through
   */
  flow?: FlowState | undefined;
  /** @internal Input rounds handed back instead of answered here, and a call that continues one (issue 41). */
  inputRounds?: InputRoundControl | undefined;
}

/** What the pipeline knows of a call's flow. */
export interface CallFlow {
  /** The session's state: `context.flow`, and where the result is recorded. */
  readonly flow: FlowState;
  /** Content and sink labels: `context.labels`. Undefined without a resolver (unknown: a `target` condition fails closed). */
  readonly labels: readonly string[] | undefined;
  /** The content labels the result is recorded with; empty: nothing is recorded. */
  readonly content: readonly string[];
}

const NONE: readonly string[] = Object.freeze([]);
const unions = new WeakMap<FlowTargetLabels, readonly string[]>();

/** The flow of one call of `resource` in `flow`, its labels from `resolver` (none: labels unknown). */
export function callFlow(
  flow: FlowState,
  resolver: FlowLabelResolver | undefined,
  resource: string,
  annotations?: ToolHints,
): CallFlow {
  if (resolver === undefined) return { flow, labels: undefined, content: NONE };
  const target = resolver.labelsFor(resource, annotations);
  // Not tracked (no flow in the policy): the labels are unknown, so a rule on them fails closed.
  if (target === NO_TARGET) return { flow, labels: undefined, content: NONE };
  return { flow, labels: allLabels(target), content: target.content };
}

/** Content ∪ sink, built once per answer of the resolver. */
function allLabels(target: FlowTargetLabels): readonly string[] {
  let all = unions.get(target);
  if (all === undefined) {
    all = Object.freeze([...new Set([...target.content, ...target.sink])]);
    unions.set(target, all);
  }
  return all;
}

/**
 * Records what came back from `source` (`result`, as the model reads it: `textOf(result)`) into the call's flow,
 * when its target has content labels. Nothing is built otherwise.
 */
export function recordFlow<R>(
  call: CallFlow,
  source: string,
  result: R,
  textOf: (result: R) => string,
): void {
  if (call.content.length > 0) call.flow.record(source, call.content, textOf(result));
}

/**
 * After a failed attempt: the JSON-RPC error a server answered with reaches the model as the error's message (its
 * text is the server's), so it enters the flow as a result would. Other failures (timeouts, lost connections, our
 * own checks) carry nothing from the server.
 */
export function recordServerError(call: CallFlow, source: string, error: unknown): void {
  if (error instanceof ServerRequestError) recordFlow(call, source, error, messageOf);
}

function messageOf(error: Error): string {
  return error.message;
}

/** What the model reads of a tool result: its text, then every string (keys too) of its structured content. */
export function toolResultText(result: ToolCallResult): string {
  if (result.structuredContent === undefined) return result.text;
  return [result.text, ...stringsIn(result.structuredContent)].join('\n');
}

/** The text of a resource read: each content's text (blobs are binary and carry no text). */
export function resourceText(result: ReadResourceResult): string {
  const out: string[] = [];
  for (const c of result.contents) if ('text' in c && typeof c.text === 'string') out.push(c.text);
  return out.join('\n');
}

/** The text of a prompt: its description and its messages' text parts and embedded resources' text. */
export function promptText(result: GetPromptResult): string {
  const out: string[] = typeof result.description === 'string' ? [result.description] : [];
  for (const message of result.messages) {
    const parts: unknown[] = Array.isArray(message.content) ? message.content : [message.content];
    for (const part of parts) {
      const text = partText(part);
      if (text !== undefined) out.push(text);
    }
  }
  return out.join('\n');
}

/** The text of a content part: a text part's, an embedded resource's; none for media (binary). */
function partText(part: unknown): string | undefined {
  if (typeof part !== 'object' || part === null) return undefined;
  const p = part as { type?: unknown; text?: unknown; resource?: { text?: unknown } };
  if (p.type === 'text' && typeof p.text === 'string') return p.text;
  if (p.type === 'resource' && typeof p.resource?.text === 'string') return p.resource.text;
  return undefined;
}
