/**
 * A model API on a loopback port for provider tests: it records every request (method, path, headers, JSON
 * body) and answers from a queue of replies written in the API's own wire format.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the fake API received. */
export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/v1/chat/completions?api-version=1`. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body. */
  body: unknown;
}

/** One answer: a JSON body (or a raw string), a status and headers. */
export interface FakeReply {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Sent as is instead of JSON. */
  raw?: string;
  /** Never answer (for cancellation and timeout tests); the request hangs until the client gives up. */
  hang?: boolean;
}

export interface FakeApi extends AsyncDisposable {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  readonly requests: RecordedRequest[];
  /** Queues replies, answered in order; a request with no reply queued gets a 500. */
  reply(...replies: (FakeReply | ((req: RecordedRequest) => FakeReply))[]): void;
  close(): Promise<void>;
}

/** Starts a fake API on 127.0.0.1, port 0. */
export async function startFakeApi(): Promise<FakeApi> {
  const requests: RecordedRequest[] = [];
  const queue: (FakeReply | ((req: RecordedRequest) => FakeReply))[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: text === '' ? undefined : JSON.parse(text),
      };
      requests.push(recorded);
      const next = queue.shift();
      const reply = typeof next === 'function' ? next(recorded) : next;
      if (reply?.hang === true) return;
      const status = reply?.status ?? (reply === undefined ? 500 : 200);
      const body = reply?.raw ?? JSON.stringify(reply?.body ?? { error: { message: 'no reply queued' } });
      res.writeHead(status, { 'content-type': 'application/json', ...reply?.headers }).end(body);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= new Promise<void>((done) => {
      server.close(() => done());
      server.closeAllConnections();
    });
    return closing;
  };
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    reply: (...replies) => queue.push(...replies),
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** A Chat Completions response (`object: chat.completion`) as OpenAI sends it. */
export function openAIResponse(message: {
  content?: string | null;
  tool_calls?: { id: string; name: string; arguments: string }[];
  finish_reason?: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
}): Record<string, unknown> {
  const calls = message.tool_calls ?? [];
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-test-2025',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: message.content ?? null,
          refusal: null,
          ...(calls.length === 0
            ? {}
            : {
                tool_calls: calls.map((c) => ({
                  id: c.id,
                  type: 'function',
                  function: { name: c.name, arguments: c.arguments },
                })),
              }),
        },
        logprobs: null,
        finish_reason: message.finish_reason ?? (calls.length > 0 ? 'tool_calls' : 'stop'),
      },
    ],
    usage: {
      prompt_tokens: message.usage?.prompt_tokens ?? 10,
      completion_tokens: message.usage?.completion_tokens ?? 5,
      total_tokens: (message.usage?.prompt_tokens ?? 10) + (message.usage?.completion_tokens ?? 5),
    },
  };
}

/** A Messages response (`type: message`) as Anthropic sends it. */
export function anthropicResponse(
  content: (
    | { type: 'text'; text: string }
    | { type: 'tool_use'; id: string; name: string; input: unknown }
  )[],
  stop_reason?: string,
): Record<string, unknown> {
  return {
    id: 'msg_test',
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    content,
    stop_reason: stop_reason ?? (content.some((c) => c.type === 'tool_use') ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    usage: { input_tokens: 12, output_tokens: 7 },
  };
}
