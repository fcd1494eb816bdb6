/**
 * Tools that answer with a task handle (issue 13): the tasks extension `io.modelcontextprotocol/tasks` (SEP-2663)
 * on protocol 2026-07-28 servers, and the experimental tasks utility on 2025-11-25 servers. The caller of a tool
 * sees one promise: the handle (read off the transport by task-handles.ts) is polled with `tasks/get` at the
 * server's poll interval, the final result (or the task's JSON-RPC error) comes back as if the call had answered
 * at once, status changes are progress, and an abort, a timeout or a refused input request sends `tasks/cancel`.
 *
 * Input a task asks for (`inputRequests` on 2026-07-28) is answered by the same gated handlers as any server
 * request (server-requests.ts) and sent with `tasks/update`; on 2025-11-25 the server asks over `tasks/result`,
 * through the connection's installed handlers, so the gate is the same there too.
 */
import type { Client } from '@modelcontextprotocol/client';
import { SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { z } from 'zod';
import {
  type InterlockError,
  isInterlockError,
  RequestCancelledError,
  RequestTimeoutError,
  ServerRequestError,
} from '../errors.js';
import { parseTask, type TaskState } from '../protocol/task-handles.js';
import type { SecretRedactor } from '../redact.js';
import { mapRequestError } from './request-errors.js';
import type { ServerRequestSupport } from './server-requests.js';

/** How long to wait between polls when the server suggests no interval. */
export const DEFAULT_TASK_POLL_INTERVAL_MS = 1000;
/** The shortest wait between polls, whatever the server suggests (a `pollIntervalMs` of 0 would spin). */
export const MIN_TASK_POLL_INTERVAL_MS = 5;
/** At most this many input requests are answered for one task: a server that asks forever is cut off. */
export const MAX_TASK_INPUT_REQUESTS = 32;
/** The longest `tasks/cancel` is waited for after an abort or a timeout. */
export const TASK_CANCEL_TIMEOUT_MS = 5000;

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
/** The longest delay a Node timer takes. */
const MAX_TIMER_MS = 2_147_483_647;
/** How a tasks/result request ended. */
type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

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
  /** 2025-11-25 only: the tasks/result request, once sent. */
  let fetching: Promise<Settled> | undefined;
  const stopFetching = new AbortController();

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
      if (options.era === 'legacy' && (task.status === 'completed' || task.status === 'failed')) {
        // tasks/result of an ended task answers at once; a server that holds it still meets the call's limits.
        fetching ??= fetchPayload();
        for (;;) {
          const left = budget();
          if (left.ms <= 0) throw timedOut(left.why);
          const payload = await pauseFor(left.ms);
          if (payload !== undefined) return settle(payload);
          if (client.transport === undefined) return settle(await fetching);
        }
      }
      if (task.status === 'completed') {
        if (task.result === undefined) throw unusable('a completed task without a result');
        return task.result;
      }
      if (task.status === 'failed') throw failed(task);
      if (task.status === 'cancelled') {
        throw new RequestCancelledError(
          `Server '${server}' cancelled ${what}${task.statusMessage === undefined ? '' : `: ${task.statusMessage}`}.`,
          { server },
        );
      }
      if (task.status === 'input_required') {
        // 2025-11-25: the server asks its questions over tasks/result, which answers with the final result once
        // the task ends; polling goes on meanwhile, so status changes still count as progress.
        if (options.era === 'legacy') fetching ??= fetchPayload();
        else if (await answerInput(task)) changed = performance.now();
      }
      const left = budget();
      if (left.ms <= 0) throw timedOut(left.why);
      const interval = Math.max(
        MIN_TASK_POLL_INTERVAL_MS,
        task.pollIntervalMs ?? DEFAULT_TASK_POLL_INTERVAL_MS,
      );
      const payload = await pauseFor(Math.min(interval, left.ms));
      if (payload !== undefined) return settle(payload);
      task = await poll();
    }
  } catch (err) {
    const ended = task.status === 'completed' || task.status === 'failed' || task.status === 'cancelled';
    if (!ended) await cancel();
    throw toError(err);
  } finally {
    // A tasks/result still open (the call ended another way) is cancelled with notifications/cancelled.
    stopFetching.abort();
  }

  /** Waits `ms` before the next poll; on 2025-11-25 an answer of tasks/result ends the wait early. */
  async function pauseFor(ms: number): Promise<Settled | undefined> {
    const pause = new AbortController();
    try {
      const waited = wait(client, ms, signal, pause.signal).then(() => undefined);
      return await (fetching === undefined ? waited : Promise.race([waited, fetching]));
    } finally {
      pause.abort(); // clears the timer of a wait that lost the race
    }
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

  /**
   * 2025-11-25: the result (or the task's JSON-RPC error) comes from tasks/result, which blocks until the task
   * ends. Its own timeout is the longest a timer allows: the loop's limits end it through `stopFetching`.
   */
  function fetchPayload(): Promise<Settled> {
    const follow = signal === undefined ? undefined : () => stopFetching.abort(signal.reason);
    if (follow !== undefined) signal?.addEventListener('abort', follow, { once: true });
    fetching = client
      .request({ method: 'tasks/result', params: { taskId: first.taskId } } as never, AnyResult, {
        timeout: MAX_TIMER_MS,
        signal: stopFetching.signal,
      })
      .then(
        (value): Settled => ({ ok: true, value }),
        (error: unknown): Settled => ({ ok: false, error }),
      )
      .finally(() => {
        if (follow !== undefined) signal?.removeEventListener('abort', follow);
      });
    return fetching;
  }

  function settle(payload: Settled): unknown {
    if (!payload.ok) throw payload.error;
    task = { ...task, status: 'completed' };
    return payload.value;
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
      } catch (err) {
        if (signal?.aborted || isInterlockError(err)) throw err;
        // The app's own handler failed: the call ends (the task is cancelled) without blaming the connection.
        throw new RequestCancelledError(
          `Call to ${what} on server '${server}' was cancelled: the handler for its '${input.method}' request threw (${err instanceof Error ? err.message : String(err)}). tasks/cancel was sent for the task.`,
          { server, cause: err },
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

  function toError(err: unknown): InterlockError | Error {
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
 * client loses its transport (the next request then fails as a lost connection instead of waiting on), or `stop`.
 */
async function wait(
  client: Client,
  ms: number,
  signal: AbortSignal | undefined,
  stop: AbortSignal,
): Promise<void> {
  const until = performance.now() + ms;
  for (
    let left = ms;
    left > 0 && client.transport !== undefined && !stop.aborted;
    left = until - performance.now()
  ) {
    await sleep(Math.min(left, WAIT_SLICE_MS), signal, stop);
  }
}

/** Waits `ms`; resolves early when `stop` aborts, rejects when `signal` aborts. No timer outlives it. */
function sleep(ms: number, signal: AbortSignal | undefined, stop: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => end(resolve), ms);
    const onAbort = () => end(() => reject(signal?.reason));
    const onStop = () => end(resolve);
    signal?.addEventListener('abort', onAbort, { once: true });
    stop.addEventListener('abort', onStop, { once: true });
    function end(settle: () => void) {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      stop.removeEventListener('abort', onStop);
      settle();
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
