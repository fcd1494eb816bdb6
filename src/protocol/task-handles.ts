/**
 * Task handles on the wire (issue 13). The SDK client (2.4) has no runtime for tasks on either era: on 2026-07-28
 * it rejects `resultType: "task"` before any hook of ours runs, and on 2025-11-25 its `tools/call` result schema
 * refuses a `CreateTaskResult`. The client declares the extension `io.modelcontextprotocol/tasks` in the
 * per-request capabilities it sends on 2026-07-28 (`InterlockClient`, client.ts; 2025-era `initialize` has no
 * `extensions` field, so nothing is declared there). The transport of each connection is given
 * {@link acceptTaskResults}, which turns a task handle answering one of our `tools/call` requests into a result the
 * SDK passes through untouched, carrying the handle under a `_meta` key only this module writes (a server's own
 * value for that key is dropped, so no server can forge a handle). The call path reads it back with
 * {@link taskHandleOf} and follows it (tasks.ts).
 */
import type { Client, Transport } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { isJsonObject } from '../json.js';
import type { InboundStage } from './inbound.js';

/** The identifier of the tasks extension (SEP-2663). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The `_meta` key the transport hook carries a task handle under; never read from a server. */
const HANDLE_KEY = 'dev.interlock/task-handle';
/** How many `tools/call` ids awaiting an answer one transport remembers beyond its ring (see {@link PendingCalls}). */
const MAX_PENDING_CALL_IDS = 10_000;
/** The ring's slots: far more than the calls one connection has in flight. */
const RING_SLOTS = 256;

const InputRequestSchema = z.object({ method: z.string(), params: z.unknown().optional() }).loose();

/** A task as either era sends it; the 2025 names (`ttl`, `pollInterval`) are read as well. */
const TaskWireSchema = z
  .object({
    taskId: z.string().min(1).max(1000),
    status: z.enum(['working', 'input_required', 'completed', 'failed', 'cancelled']),
    statusMessage: z.string().optional(),
    ttlMs: z.number().nullable().optional(),
    ttl: z.number().nullable().optional(),
    pollIntervalMs: z.number().optional(),
    pollInterval: z.number().optional(),
    inputRequests: z.record(z.string(), InputRequestSchema).optional(),
    result: z.record(z.string(), z.unknown()).optional(),
    error: z
      .object({ code: z.number(), message: z.string(), data: z.unknown().optional() })
      .loose()
      .optional(),
  })
  .loose();

/** One task's state, the same for both eras. */
export interface TaskState {
  taskId: string;
  status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
  statusMessage?: string | undefined;
  /** How long the server keeps the task, from its creation; null or undefined: no limit given. */
  ttlMs?: number | null | undefined;
  pollIntervalMs?: number | undefined;
  inputRequests?: Record<string, { method: string; params?: unknown }> | undefined;
  result?: Record<string, unknown> | undefined;
  error?: { code: number; message: string; data?: unknown } | undefined;
}

/** Reads a task from what a server sent; undefined when it is not one. */
export function parseTask(value: unknown): TaskState | undefined {
  const parsed = TaskWireSchema.safeParse(value);
  if (!parsed.success) return undefined;
  const { ttl, pollInterval, ...task } = parsed.data;
  return {
    ...task,
    ttlMs: task.ttlMs ?? ttl,
    pollIntervalMs: task.pollIntervalMs ?? pollInterval,
  } as TaskState;
}

/** The task handle a `tools/call` result carries (put there by {@link acceptTaskResults}), if any. */
export function taskHandleOf(result: unknown): TaskState | undefined {
  const meta = (result as { _meta?: Record<string, unknown> } | null)?._meta;
  const handle = meta?.[HANDLE_KEY];
  return handle === undefined ? undefined : (handle as TaskState);
}

/**
 * The `tools/call` params to send: on 2025-11-25 a tool that declares `execution.taskSupport` (`required`, or
 * `optional`) on a server with `tasks.requests.tools.call` is asked to run as a task (MCP 2025-11-25 tasks: tool
 * calls are augmented only then). On 2026-07-28 the server decides alone; the params stay as they are.
 */
export function taskCallParams<P extends { name: string }>(
  client: Client,
  connection: { serverCapabilities?: unknown; tools: readonly { name: string; execution?: unknown }[] },
  params: P,
): P {
  if (client.getProtocolEra() === 'modern') return params;
  const caps = connection.serverCapabilities as { tasks?: { requests?: { tools?: { call?: unknown } } } };
  if (caps?.tasks?.requests?.tools?.call === undefined) return params;
  const tool = connection.tools.find((t) => t.name === params.name);
  const support = (tool?.execution as { taskSupport?: string } | undefined)?.taskSupport;
  return support === 'required' || support === 'optional' ? { ...params, task: {} } : params;
}

type Message = { id?: unknown; method?: unknown; result?: unknown };

/**
 * The ids of the `tools/call` requests a transport sent and has not seen answered. The SDK numbers requests in
 * increasing order, so an id sits in a ring of numbers at its low bits: remembering and forgetting one allocates
 * nothing and leaves no table for V8 to re-allocate per call (client.ts, `DirectCalls`, says why that matters). An
 * id that is not a small number, or one still waiting when a newer one wants its slot (a slow call, or one never
 * answered), goes to a `Set`, which forgets the oldest beyond {@link MAX_PENDING_CALL_IDS}.
 */
class PendingCalls {
  readonly #ring = new Float64Array(RING_SLOTS).fill(-1);
  readonly #others = new Set<unknown>();

  add(id: unknown): void {
    if (!isRingId(id)) {
      this.#remember(id);
      return;
    }
    const slot = id & (RING_SLOTS - 1);
    const held = this.#ring[slot] as number;
    if (held !== -1 && held !== id) this.#remember(held);
    this.#ring[slot] = id;
  }

  /** Forgets `id`; true if it was remembered. */
  delete(id: unknown): boolean {
    if (isRingId(id)) {
      const slot = id & (RING_SLOTS - 1);
      if (this.#ring[slot] === id) {
        this.#ring[slot] = -1;
        return true;
      }
    }
    return this.#others.size > 0 && this.#others.delete(id);
  }

  #remember(id: unknown): void {
    this.#others.add(id);
    // Ids of calls that never got an answer (timed out, cancelled) are let go, oldest first.
    if (this.#others.size > MAX_PENDING_CALL_IDS) this.#others.delete(this.#others.values().next().value);
  }
}

function isRingId(id: unknown): id is number {
  return typeof id === 'number' && Number.isSafeInteger(id) && id >= 0;
}

/**
 * The inbound stage that lets task handles reach the call path (inbound.ts, first in the chain): `transport`'s
 * `send` remembers the ids of the `tools/call` requests sent, and the stage rewrites a handle answering one of them
 * into a result the SDK accepts (see the module comment). Outbound messages pass as they are. The transport object
 * itself is kept, so `instanceof` checks still hold. An answer's id is read as the SDK reads it, `Number(id)`.
 */
export function acceptTaskResults(transport: Transport): InboundStage {
  const calls = new PendingCalls();
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const m = message as Message;
    if (m.method === 'tools/call' && m.id !== undefined) calls.add(m.id);
    return send(message, options);
  };
  return {
    name: 'task-handles',
    handle(message, extra, next) {
      const m = message as Message;
      if (m.method === undefined && m.id !== undefined && forget(calls, m.id) && m.result !== undefined) {
        const result = liftTaskHandle(m.result);
        // A plain result comes back as it was: the message is passed on without a copy.
        next(result === m.result ? message : ({ ...m, result } as typeof message), extra);
        return;
      }
      next(message, extra);
    },
  };
}

/** Forgets the call `id` answers; an id `"7"` answers request 7, as the SDK's `_onresponse` reads ids (`Number`). */
function forget(calls: PendingCalls, id: unknown): boolean {
  return calls.delete(id) || (typeof id === 'string' && calls.delete(Number(id)));
}

/**
 * A `tools/call` result as the SDK should see it: a task handle (2026: `resultType: "task"` with the task's fields;
 * 2025: `{ task }` without `content`) becomes an error-flagged empty result (so no output-schema check runs on
 * it) carrying the handle; anything else only loses a server's own value for the handle key.
 */
function liftTaskHandle(record: unknown): unknown {
  if (!isJsonObject(record)) return record;
  let handle: unknown;
  if (record.resultType === 'task') handle = record;
  else if (record.resultType === undefined && record.content === undefined && record.task !== undefined)
    handle = record.task;
  const meta = record._meta as Record<string, unknown> | undefined;
  // The common case, every plain result: nothing to lift and no handle key to drop, so nothing is copied.
  if (handle === undefined && (meta === undefined || !(HANDLE_KEY in meta))) return record;
  const { [HANDLE_KEY]: _forged, ...ownMeta } = meta ?? {};
  if (handle === undefined) return { ...record, _meta: ownMeta };
  // An unreadable handle is passed on as a handle with no id: the call path reports it as an unusable answer.
  const task = parseTask(handle) ?? { taskId: '', status: 'failed' };
  return {
    ...(record.resultType === undefined ? {} : { resultType: 'complete' }),
    content: [],
    isError: true,
    _meta: { ...ownMeta, [HANDLE_KEY]: task },
  };
}
