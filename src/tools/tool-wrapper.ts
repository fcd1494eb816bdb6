/**
 * A `ToolWrapper` is what a model (or an app) holds for one MCP tool: its exposed name and definition, and
 * `execute` / `call`. It holds no connection: every call goes through the invoker (the manager) by name, so the
 * capability gate runs on every call and a wrapper handed out before a reconnect keeps working after it.
 */
import type { Context } from '@opentelemetry/api';
import type { ToolCallResult } from './normalize.js';

/** The untrusted hints a server gives about a tool (MCP `ToolAnnotations`). */
export interface ToolAnnotations {
  readonly title?: string | undefined;
  readonly readOnlyHint?: boolean | undefined;
  readonly destructiveHint?: boolean | undefined;
  readonly idempotentHint?: boolean | undefined;
  readonly openWorldHint?: boolean | undefined;
  readonly [key: string]: unknown;
}

/**
 * An icon a server offers for a tool (MCP `Icon`). Only `https:` and `data:image/...` sources are kept (MCP
 * 2026-07-28 basic, "Icons": clients MUST reject unsafe schemes); Interlock never fetches them. An app that shows
 * one fetches it without credentials and treats SVG as untrusted content.
 */
export interface ToolIcon {
  readonly src: string;
  readonly mimeType?: string | undefined;
  readonly sizes?: readonly string[] | undefined;
  readonly theme?: 'light' | 'dark' | undefined;
}

/** A tool's definition as the manager exposes it. */
export interface ToolDefinition {
  /** Exposed name, `mcp__{server}__{tool}`. */
  readonly name: string;
  /** The server's name. */
  readonly server: string;
  /** The tool's original name on its server; always what the server is called with. */
  readonly tool: string;
  /** A name for people (the tool's `title`, else `annotations.title`); untrusted text from the server. */
  readonly title?: string | undefined;
  readonly description: string;
  /** Icons for a user interface (see {@link ToolIcon}). */
  readonly icons?: readonly ToolIcon[] | undefined;
  /** The server's JSON Schema for the arguments, kept whole (a missing `type` becomes `object`). */
  readonly inputSchema: Readonly<Record<string, unknown>>;
  /**
   * The server's JSON Schema for `structuredContent`, kept whole. When present, every successful result must
   * carry `structuredContent` that matches it, or the call fails with `INVALID_TOOL_OUTPUT`.
   */
  readonly outputSchema?: Readonly<Record<string, unknown>> | undefined;
  /**
   * Untrusted hints (MCP: clients MUST treat annotations as untrusted unless the server is trusted): a policy may
   * use them to deny more or ask first, never to allow more.
   */
  readonly annotations?: ToolAnnotations | undefined;
  /** True when registered offline with `registerTools` and not (yet) backed by a live server. */
  readonly offline: boolean;
}

/** Options for one tool call. */
export interface ToolCallOptions {
  /** Cancels the call; the server is sent `notifications/cancelled`. */
  signal?: AbortSignal | undefined;
  /** Per-request timeout; defaults to the server's `timeoutMs`. */
  timeoutMs?: number | undefined;
  /** The agent on whose behalf the call is made (for conditions and audit). */
  agent?: string | undefined;
  /** Who the agent acts for (a tenant or user; for shared quotas and audit). */
  principal?: string | undefined;
  /**
   * Total time the call may take, even while the server reports progress (progress resets `timeoutMs`).
   * Defaults to the server's `maxTotalTimeoutMs`.
   */
  maxTotalTimeoutMs?: number | undefined;
  /** Progress notifications from the server for this call. */
  onProgress?:
    | ((progress: { progress: number; total?: number | undefined; message?: string | undefined }) => void)
    | undefined;
  /** The OpenTelemetry context the call's span is a child of. @default the active context */
  traceContext?: Context | undefined;
}

/** What a wrapper calls through. The manager implements it; tests may pass their own. */
export interface ToolInvoker {
  callTool(
    name: string,
    args: Record<string, unknown> | undefined,
    options?: ToolCallOptions,
  ): Promise<ToolCallResult>;
}

/** One tool of one server, callable by a model. */
export class ToolWrapper {
  #definition: ToolDefinition;
  readonly #invoker: ToolInvoker;

  constructor(definition: ToolDefinition, invoker: ToolInvoker) {
    this.#definition = definition;
    this.#invoker = invoker;
  }

  /** Exposed name, `mcp__{server}__{tool}`. */
  get name(): string {
    return this.#definition.name;
  }
  get server(): string {
    return this.#definition.server;
  }
  /** Original tool name on the server. */
  get tool(): string {
    return this.#definition.tool;
  }
  get title(): string | undefined {
    return this.#definition.title;
  }
  get description(): string {
    return this.#definition.description;
  }
  get icons(): readonly ToolIcon[] | undefined {
    return this.#definition.icons;
  }
  get inputSchema(): Readonly<Record<string, unknown>> {
    return this.#definition.inputSchema;
  }
  get outputSchema(): Readonly<Record<string, unknown>> | undefined {
    return this.#definition.outputSchema;
  }
  get annotations(): ToolAnnotations | undefined {
    return this.#definition.annotations;
  }
  /** True while the tool is only registered offline. */
  get offline(): boolean {
    return this.#definition.offline;
  }
  /** A frozen snapshot of the current definition. */
  get definition(): ToolDefinition {
    return this.#definition;
  }

  /** Calls the tool and resolves to its result normalized to a string (errors start with `Error: `). */
  async execute(args?: Record<string, unknown>, options?: ToolCallOptions): Promise<string> {
    return (await this.#invoker.callTool(this.#definition.name, args, options)).text;
  }

  /** Calls the tool and resolves to the detailed result: `{ text, isError, content, structuredContent }`. */
  call(args?: Record<string, unknown>, options?: ToolCallOptions): Promise<ToolCallResult> {
    return this.#invoker.callTool(this.#definition.name, args, options);
  }

  /**
   * Replaces the definition after a refresh (same exposed name). Internal: used by the manager so wrappers
   * handed out earlier stay valid.
   * @internal
   */
  _update(definition: ToolDefinition): void {
    this.#definition = definition;
  }

  toJSON(): ToolDefinition {
    return this.#definition;
  }
}
