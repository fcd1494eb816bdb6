/**
 * The manager's typed events. Payloads name servers and tools, durations and error codes; never argument
 * values, header values or environment values.
 */

import { EventEmitter } from 'node:events';
import type { ServerLogEntry } from './server-logs.js';

/**
 * How a tool call that returned ended (an error result too): what `tool_call_completed` reports, for MCP tools on
 * the manager and for native tools on their agent (src/session).
 */
export interface ToolCallCompletion {
  durationMs: number;
  /** The result is an error result (`isError: true`): the call counts as an error in `health()`. */
  isError: boolean;
  /** The length of the result's text. */
  resultChars: number;
}

/** How a tool call that threw ended: what `tool_call_failed` reports, for MCP and native tools alike. */
export interface ToolCallFailure {
  durationMs: number;
  /** The error's code (`REQUEST_TIMEOUT`, `INVALID_TOOL_INPUT`, ...), `UNKNOWN` for an error without one. */
  code: string;
  error: Error;
}

/**
 * How a tool call the gate refused ended: `CAPABILITY_DENIED` (a rule, default deny, an unapproved ask) or
 * `AUDIT_FAILED` (the audit sink failed and the call was blocked). Nothing was run. What `tool_call_denied` reports,
 * for MCP tools on the manager and for native tools on their agent.
 */
export interface ToolCallDenial {
  /** From the call until the gate refused it (an approver's wait included). */
  durationMs: number;
  code: string;
  /** Why the gate refused it. */
  reason: string;
  /** The rule that decided, when one did. */
  ruleId: string | undefined;
  error: Error;
}

/** Event name to payload. */
export interface MCPManagerEvents {
  connecting: { server: string; transport: string };
  connected: { server: string; transport: string; durationMs: number; tools: number };
  connection_failed: { server: string; error: Error; durationMs: number };
  disconnected: { server: string; reason: 'closed' | 'lost'; error?: Error | undefined };
  tools_changed: { server: string; added: string[]; removed: string[]; changed: string[] };
  /** A tool was refused at discovery (unsafe original name). */
  tool_refused: { server: string; tool: string; reason: string };
  /** Two tools would have had the same exposed name; both stay reachable under distinct names. */
  tool_name_collision: {
    server: string;
    tool: string;
    name: string;
    other: { server: string; tool: string };
  };
  /** A live tool's definition differs from its pin: `blocked` until approved, or re-pinned (`warned`, `accepted`). */
  tool_definition_changed: {
    server: string;
    tool: string;
    name: string;
    pinnedHash: string;
    currentHash: string;
    action: 'blocked' | 'warned' | 'accepted';
    /**
     * What changed since the pin, part by part (title, description, schemas, annotations, icons): `- ` lines were
     * pinned, `+ ` lines are new. Every line is `+ ` when the pin kept no definition (an older pin file).
     */
    diff: readonly string[];
  };
  /** The connection dropped; a reconnect attempt is scheduled after `delayMs`. */
  reconnecting: { server: string; attempt: number; delayMs: number; error: Error };
  /** A reconnect succeeded; tools were listed again (and pins re-checked). */
  reconnected: { server: string; attempt: number; tools: number };
  /** Reconnecting gave up: calls fail at once with `NOT_CONNECTED` until `reconnectServer`. */
  failed: { server: string; error: Error };
  /** `attempt` is 2 when a call is re-sent after a reconnect (never sent before, or idempotent). */
  tool_call_started: { callId: number; name: string; server: string; tool: string; attempt: number };
  tool_call_completed: { callId: number; name: string; server: string; tool: string } & ToolCallCompletion;
  tool_call_failed: { callId: number; name: string; server: string; tool: string } & ToolCallFailure;
  /**
   * The attempt ended without a result: the server's input round `round` went back to the caller (a gateway whose
   * replicas share no memory, issue 41), and a later call continues it. Not counted in `health()`: the call that
   * ends it is.
   */
  tool_call_handed_off: {
    callId: number;
    name: string;
    server: string;
    tool: string;
    durationMs: number;
    round: number;
  };
  /** The gate refused the call (at authorize, or at the re-check before sending): nothing reached the server. */
  tool_call_denied: { callId: number; name: string; server: string; tool: string } & ToolCallDenial;
  /**
   * A resource read (`resources/read`, `target` is the URI; also a skill's file), prompt get (`prompts/get`, `target`
   * is the name) or skill listing (`skills/list`, `target` is the server) ended: they pass the same pipeline as tool
   * calls (issue 15). `code` is set when it failed.
   */
  request_completed: {
    callId: number;
    server: string;
    method: 'resources/read' | 'prompts/get' | 'skills/list';
    target: string;
    durationMs: number;
  };
  request_failed: {
    callId: number;
    server: string;
    method: 'resources/read' | 'prompts/get' | 'skills/list';
    target: string;
    durationMs: number;
    code: string;
    error: Error;
  };
  warning: { server?: string | undefined; code: string; message: string };
  /** A log message a server sent (`notifications/message`), its text cut to a bounded length, secrets masked. */
  server_log: ServerLogEntry;
}

export type MCPManagerEventName = keyof MCPManagerEvents;
export type MCPManagerListener<K extends MCPManagerEventName> = (event: MCPManagerEvents[K]) => void;

/** A typed facade over `EventEmitter`. A throwing listener never breaks the emitter's caller. */
export class TypedEvents<Events extends object> {
  readonly #emitter = new EventEmitter();

  constructor() {
    // Many agents may watch one manager; a high but finite cap still reveals a real leak.
    this.#emitter.setMaxListeners(100);
  }

  on<K extends keyof Events & string>(event: K, listener: (payload: Events[K]) => void): this {
    this.#emitter.on(event, listener);
    return this;
  }

  once<K extends keyof Events & string>(event: K, listener: (payload: Events[K]) => void): this {
    this.#emitter.once(event, listener);
    return this;
  }

  off<K extends keyof Events & string>(event: K, listener: (payload: Events[K]) => void): this {
    this.#emitter.off(event, listener);
    return this;
  }

  /** Emits only when someone listens, so payloads are not even built on the hot path otherwise. */
  emit<K extends keyof Events & string>(event: K, payload: Events[K] | (() => Events[K])): void {
    if (this.#emitter.listenerCount(event) === 0) return;
    const value = typeof payload === 'function' ? (payload as () => Events[K])() : payload;
    for (const listener of this.#emitter.rawListeners(event)) {
      try {
        (listener as (p: Events[K]) => void)(value);
      } catch (err) {
        process.emitWarning(
          `An Interlock '${event}' listener threw: ${(err as Error)?.message ?? String(err)}`,
          {
            code: 'INTERLOCK_LISTENER_ERROR',
          },
        );
      }
    }
  }

  listenerCount(event: keyof Events & string): number {
    return this.#emitter.listenerCount(event);
  }

  removeAllListeners(): void {
    this.#emitter.removeAllListeners();
  }
}
