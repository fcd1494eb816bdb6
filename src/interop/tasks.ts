/**
 * Tools that answer with a task handle (issue 13): the tasks extension `io.modelcontextprotocol/tasks` (SEP-2663)
 * on protocol 2026-07-28 servers, and the experimental tasks utility on 2025-11-25 servers. The caller of a tool
 * sees one promise: the handle is polled with `tasks/get` at the server's poll interval, the final result (or
 * the task's JSON-RPC error) comes back as if the call had answered at once, status changes are progress, and an
 * abort, a timeout or a refused input request sends `tasks/cancel`.
 *
 * The SDK client (2.4) has no runtime for either: on 2026-07-28 it rejects `resultType: "task"` before any hook
 * of ours runs, and on 2025-11-25 its `tools/call` result schema refuses a `CreateTaskResult`. So the transport
 * of each connection is given {@link acceptTaskResults}: it declares the extension in the per-request
 * capabilities the SDK already sends on 2026-07-28 (2025-era `initialize` has no `extensions` field, so nothing is
 * declared there), and turns a task handle answering one of our `tools/call` requests into a result the SDK
 * passes through untouched, carrying the handle under a `_meta` key only this module writes (a server's own value
 * for that key is dropped, so no server can forge a handle).
 *
 * Input a task asks for (`inputRequests` on 2026-07-28) is answered by the same gated handlers as any server
 * request (server-requests.ts) and sent with `tasks/update`; on 2025-11-25 the server asks over `tasks/result`,
 * through the connection's installed handlers, so the gate is the same there too.
 */
import type { Client, Transport } from '@modelcontextprotocol/client';
import { SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { z } from 'zod';
import {
  type InteropError,
  RequestCancelledError,
  RequestTimeoutError,
  ServerRequestError,
} from '../errors.js';
import type { SecretRedactor } from '../redact.js';
import { mapRequestError } from './request-errors.js';
import type { ServerRequestSupport } from './server-requests.js';

/** The identifier of the tasks extension (SEP-2663). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** How long to wait between polls when the server suggests no interval. */
export const DEFAULT_TASK_POLL_INTERVAL_MS = 1000;
/** The shortest wait between polls, whatever the server suggests (a `pollIntervalMs` of 0 would spin). */
export const MIN_TASK_POLL_INTERVAL_MS = 5;
/** At most this many input requests are answered for one task: a server that asks forever is cut off. */
export const MAX_TASK_INPUT_REQUESTS = 32;
/** The longest `tasks/cancel` is waited for after an abort or a timeout. */
export const TASK_CANCEL_TIMEOUT_MS = 5000;

/** The `_meta` key the transport hook carries a task handle under; never read from a server. */
const HANDLE_KEY = 'dev.interlock/task-handle';
/** The per-request capabilities key of protocol 2026-07-28 (SEP-2575). */
const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';

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
function parseTask(value: unknown): TaskState | undefined {
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

type Message = { id?: unknown; method?: unknown; params?: Record<string, unknown>; result?: unknown };

/**
 * Hooks `transport` (before the client connects) so task handles reach the call path: declares the extension in
 * each 2026-07-28 request's capabilities and rewrites a handle answering a `tools/call` into a result the SDK
 * accepts (see the module comment). The transport object itself is kept, so `instanceof` checks still hold.
 */
export function acceptTaskResults(transport: Transport): void {
  const calls = new Set<unknown>();
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const m = message as Message;
    if (m.method === 'tools/call' && m.id !== undefined) calls.add(m.id);
    return send(declareExtension(m) as typeof message, options);
  };
  let receive: Transport['onmessage'];
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => receive,
    set: (handler: Transport['onmessage']) => {
      receive =
        handler === undefined
          ? undefined
          : (message, extra) => {
              const m = message as Message;
              if (
                m.method === undefined &&
                m.id !== undefined &&
                calls.delete(m.id) &&
                m.result !== undefined
              ) {
                return handler({ ...m, result: liftTaskHandle(m.result) } as typeof message, extra);
              }
              return handler(message, extra);
            };
    },
  });
}

/** Adds the extension to a 2026-07-28 envelope's capabilities; other messages are left as they are. */
function declareExtension(message: Message): Message {
  const meta = message.params?._meta as Record<string, unknown> | undefined;
  const capabilities = meta?.[CLIENT_CAPABILITIES_KEY] as
    | { extensions?: Record<string, unknown> }
    | undefined;
  if (capabilities === undefined || typeof capabilities !== 'object') return message;
  const declared = {
    ...capabilities,
    extensions: { ...capabilities.extensions, [TASKS_EXTENSION]: {} },
  };
  return {
    ...message,
    params: { ...message.params, _meta: { ...meta, [CLIENT_CAPABILITIES_KEY]: declared } },
  };
}

/**
 * A `tools/call` result as the SDK should see it: a task handle (2026: `resultType: "task"` with the task's fields;
 * 2025: `{ task }` without `content`) becomes an error-flagged empty result (so no output-schema check runs on
 * it) carrying the handle; anything else only loses a server's own value for the handle key.
 */
function liftTaskHandle(result: unknown): unknown {
  if (result === null || typeof result !== 'object' || Array.isArray(result)) return result;
  const record = result as Record<string, unknown>;
  const meta = record._meta as Record<string, unknown> | undefined;
  const { [HANDLE_KEY]: forged, ...ownMeta } = meta ?? {};
  let handle: unknown;
  if (record.resultType === 'task') handle = record;
  else if (record.resultType === undefined && record.content === undefined && record.task !== undefined)
    handle = record.task;
  if (handle === undefined) return forged === undefined ? record : { ...record, _meta: ownMeta };
  // An unreadable handle is passed on as a handle with no id: the call path reports it as an unusable answer.
  const task = parseTask(handle) ?? { taskId: '', status: 'failed' };
  return {
    ...(record.resultType === undefined ? {} : { resultType: 'complete' }),
    content: [],
    isError: true,
    _meta: { ...ownMeta, [HANDLE_KEY]: task },
  };
}

/** What following a task needs from the call path. */
export interface TaskFollowOptions {
  server: string;
  /** The exposed tool name, for messages. */
  tool: string;
  /** `modern` (2026-07-28: tasks extension) or `legacy` (2025-11-25 tasks utility). */
  era: 'modern' | 'legacy';
  /** No status change for this long ends the call (a status change counts as progress). */
  timeoutMs: number;
  /** The whole call, task included, ends after this long. */
  maxTotalTimeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
  onProgress?: ((progress: { progress: number; message?: string | undefined }) => void) | undefined;
  /** Answers an input request through the gate (server-requests.ts). */
  answer: ServerRequestSupport['answer'];
  /** Sees every status the task reports (for the call's span). */
  onStatus?: ((task: TaskState) => void) | undefined;
  redactor?: SecretRedactor | undefined;
}

const AnyResult = z.record(z.string(), z.unknown());

/**
 * Follows `first` to its end and resolves to the tool's final result (a `CallToolResult`), or rejects with a coded
 * error: the task's own JSON-RPC error (`SERVER_ERROR`), `REQUEST_CANCELLED`, `REQUEST_TIMEOUT`, or what a refused
 * input request threw. Any end but the task's own sends `tasks/cancel` first.
 */
export async function followTask(
  client: Client,
  first: TaskState,
  options: TaskFollowOptions,
): Promise<unknown> {
  const { server, signal } = options;
  const what = `tool '${options.tool}' (task ${first.taskId})`;
  if (first.taskId === '') {
    throw new ServerRequestError(
      `Server '${server}' answered the call to tool '${options.tool}' with an unreadable task handle.`,
      -32603,
      undefined,
      { server },
    );
  }
  const started = performance.now();
  const request = <T>(method: string, params: Record<string, unknown>, timeout: number) =>
    client.request({ method, params: { taskId: first.taskId, ...params } } as never, AnyResult, {
      timeout,
      signal,
    }) as Promise<T>;
  let changed = started;
  let steps = 0;
  let task = first;
  let last: { status: string; message: string | undefined } | undefined;
  const answered = new Set<string>();

  /** The time left, and which limit it is. */
  const budget = () => {
    const limits: { at: number; why: string }[] = [
      { at: changed + options.timeoutMs, why: `no status change for ${options.timeoutMs} ms (timeoutMs)` },
    ];
    if (options.maxTotalTimeoutMs !== undefined)
      limits.push({
        at: started + options.maxTotalTimeoutMs,
        why: `maxTotalTimeoutMs ${options.maxTotalTimeoutMs} ms`,
      });
    if (typeof task.ttlMs === 'number')
      limits.push({ at: started + task.ttlMs, why: `its time to live (${task.ttlMs} ms) ended` });
    const first = limits.reduce((a, b) => (b.at < a.at ? b : a));
    return { ms: first.at - performance.now(), why: first.why };
  };
  const timedOut = (why: string, cause?: unknown) =>
    new RequestTimeoutError(
      `Call to ${what} on server '${server}' did not finish: ${why}. tasks/cancel was sent for the task; raise timeoutMs or maxTotalTimeoutMs if it needs longer.`,
      options.timeoutMs,
      { server, cause },
    );

  try {
    for (;;) {
      if (last === undefined || last.status !== task.status || last.message !== task.statusMessage) {
        if (last !== undefined) changed = performance.now();
        last = { status: task.status, message: task.statusMessage };
        options.onStatus?.(task);
        const message =
          task.statusMessage === undefined ? task.status : `${task.status}: ${task.statusMessage}`;
        options.onProgress?.({ progress: ++steps, message });
      }
      if (task.status === 'completed') {
        if (options.era === 'legacy') return await payload();
        if (task.result === undefined) throw unusable('a completed task without a result');
        return task.result;
      }
      if (task.status === 'failed') {
        if (options.era === 'legacy') return await payload();
        throw failed(task);
      }
      if (task.status === 'cancelled') {
        throw new RequestCancelledError(
          `Server '${server}' cancelled ${what}${task.statusMessage === undefined ? '' : `: ${task.statusMessage}`}.`,
          { server },
        );
      }
      if (task.status === 'input_required') {
        // 2025-11-25: the server asks its questions over tasks/result, which then answers with the final result.
        if (options.era === 'legacy') return await payload();
        if (await answerInput(task)) changed = performance.now();
      }
      const left = budget();
      if (left.ms <= 0) throw timedOut(left.why);
      const interval = Math.max(
        MIN_TASK_POLL_INTERVAL_MS,
        task.pollIntervalMs ?? DEFAULT_TASK_POLL_INTERVAL_MS,
      );
      await wait(client, Math.min(interval, left.ms), signal);
      task = await poll();
    }
  } catch (err) {
    const ended = task.status === 'completed' || task.status === 'failed' || task.status === 'cancelled';
    if (!ended) await cancel();
    throw toError(err);
  }

  async function poll(): Promise<TaskState> {
    const raw = await request<unknown>(
      'tasks/get',
      {},
      Math.max(1, Math.min(options.timeoutMs, budget().ms)),
    );
    const next = parseTask(raw);
    if (next === undefined || next.taskId !== first.taskId) throw unusable('an unreadable tasks/get result');
    return next;
  }

  /** 2025-11-25: the result (or the task's JSON-RPC error) comes from tasks/result. */
  async function payload(): Promise<unknown> {
    const result = await request<unknown>('tasks/result', {}, Math.max(1, budget().ms));
    task = { ...task, status: 'completed' };
    return result;
  }

  /** Answers the input requests not answered yet; true when some were. */
  async function answerInput(current: TaskState): Promise<boolean> {
    const pending = Object.entries(current.inputRequests ?? {}).filter(([key]) => !answered.has(key));
    if (pending.length === 0) return false;
    if (answered.size + pending.length > MAX_TASK_INPUT_REQUESTS) {
      throw unusable(`more than ${MAX_TASK_INPUT_REQUESTS} input requests`);
    }
    const inputResponses: Record<string, unknown> = {};
    for (const [key, input] of pending) {
      answered.add(key);
      const ask = new AbortController();
      const stop = () => ask.abort(signal?.reason);
      signal?.addEventListener('abort', stop, { once: true });
      try {
        inputResponses[key] = await raceAbort(
          options.answer(server, input.method, input.params, ask.signal),
          ask.signal,
        );
      } finally {
        signal?.removeEventListener('abort', stop);
        ask.abort();
      }
    }
    await request('tasks/update', { inputResponses }, options.timeoutMs);
    return true;
  }

  async function cancel(): Promise<void> {
    try {
      await client.request({ method: 'tasks/cancel', params: { taskId: first.taskId } } as never, AnyResult, {
        timeout: Math.min(options.timeoutMs, TASK_CANCEL_TIMEOUT_MS),
      });
    } catch {
      // Cancellation is cooperative and best effort: the server may be gone or may no longer know the task.
    }
  }

  function unusable(why: string): ServerRequestError {
    return new ServerRequestError(
      `Server '${server}' gave an unusable answer while running ${what}: ${why}.`,
      -32603,
      { taskId: first.taskId },
      { server },
    );
  }

  function failed(state: TaskState): ServerRequestError {
    const error = state.error ?? { code: -32603, message: state.statusMessage ?? 'no error given' };
    const message = `Call to ${what} on server '${server}' failed: ${error.message} (JSON-RPC ${error.code}).`;
    const mapped = new ServerRequestError(message, error.code, error.data, { server });
    return options.redactor?.maskError(mapped) ?? mapped;
  }

  function toError(err: unknown): InteropError | Error {
    if (signal?.aborted) {
      return new RequestCancelledError(
        `Call to ${what} on server '${server}' was cancelled; tasks/cancel was sent for the task.`,
        { server, cause: err },
      );
    }
    if (err instanceof SdkError && err.code === SdkErrorCode.RequestTimeout) {
      const left = budget();
      return timedOut(
        left.ms <= 0 ? left.why : `a task request got no answer within ${options.timeoutMs} ms`,
        err,
      );
    }
    return mapRequestError(err, {
      server,
      what,
      timeoutMs: options.timeoutMs,
      signal,
      redactor: options.redactor,
    });
  }
}

/** The longest single wait: a connection closed meanwhile is noticed at least this often. */
const WAIT_SLICE_MS = 250;

/**
 * Waits `ms` (the server's poll interval may be long), or until `signal` aborts (then rejects), or until the
 * client loses its transport (the next request then fails as a lost connection instead of waiting on).
 */
async function wait(client: Client, ms: number, signal: AbortSignal | undefined): Promise<void> {
  const until = performance.now() + ms;
  for (let left = ms; left > 0 && client.transport !== undefined; left = until - performance.now()) {
    await sleep(Math.min(left, WAIT_SLICE_MS), signal);
  }
}

/** Waits `ms`, or until `signal` aborts (then rejects). */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(done, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    function done() {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }
  });
}

/** `promise`, or a rejection as soon as `signal` aborts (a handler that ignores its signal does not hold the call). */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
