/**
 * OpenAI Chat Completions (`POST {baseURL}/chat/completions`), which also serves Azure OpenAI, vLLM, Ollama,
 * LM Studio and llama.cpp servers: they speak the same wire format.
 */
import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { isJsonObject } from '../json.js';
import { ModelProviderError } from './errors.js';
import { type HttpProviderOptions, joinUrl, origin, postJson } from './http.js';
import { parseOptions } from './options.js';
import { convertTools } from './schema.js';
import type {
  FinishReason,
  ModelMessage,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ModelToolCall,
  ToolResultMessage,
} from './types.js';

/** The default `baseURL`. */
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/** Options of {@link OpenAIChatProvider}. */
export interface OpenAIChatProviderOptions extends HttpProviderOptions {
  /** The model (for Azure: the deployment's model name). */
  model: string;
  /**
   * The API root; `/chat/completions` is appended. Examples: `http://127.0.0.1:11434/v1` (Ollama),
   * `http://127.0.0.1:8000/v1` (vLLM), `https://{resource}.openai.azure.com/openai/v1` (Azure).
   * @default OPENAI_BASE_URL
   */
  baseURL?: string | undefined;
  /** Sent as `Authorization: Bearer <key>` (or `api-key`, see `apiKeyHeader`). Local servers need none. */
  apiKey?: string | undefined;
  /** How the key is sent: `authorization` (Bearer) or Azure's `api-key` header. @default 'authorization' */
  apiKeyHeader?: 'authorization' | 'api-key' | undefined;
  /** Query parameters added to the URL, e.g. `{ 'api-version': '2024-10-21' }` for Azure deployments. */
  query?: Readonly<Record<string, string>> | undefined;
  /** Sent as `max_tokens`. @default not sent (the server's default) */
  maxTokens?: number | undefined;
  /** Sent as `temperature`. @default not sent */
  temperature?: number | undefined;
  /** Extra body fields (`max_completion_tokens`, `seed`, `reasoning_effort`, ...), merged last. */
  extraBody?: Readonly<Record<string, unknown>> | undefined;
  /** Name reported in telemetry (`gen_ai.provider.name`). @default 'openai' */
  providerName?: string | undefined;
  /** Told once per tool schema that had to be converted (see `toProviderSchema`). @default none */
  onWarning?: ((message: string) => void) | undefined;
}

const OptionsSchema = z.object({
  model: z.string().min(1),
  baseURL: z
    .string()
    .url()
    .refine((u) => /^https?:$/.test(new URL(u).protocol), 'must use http: or https:')
    .optional(),
  apiKey: z.string().min(1).optional(),
  apiKeyHeader: z.enum(['authorization', 'api-key']).optional(),
  maxTokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
  timeoutMs: z.number().int().positive().optional(),
  maxRetries: z.number().int().min(0).max(10).optional(),
  providerName: z.string().min(1).optional(),
});

const ToolCallSchema = z.object({
  id: z.string().optional(),
  type: z.string().optional(),
  function: z.object({
    name: z.string(),
    // Ollama's native shape sends an object; the Chat Completions format sends a JSON string.
    arguments: z
      .union([z.string(), z.record(z.string(), z.unknown())])
      .nullable()
      .optional(),
  }),
});

const ResponseSchema = z.object({
  id: z.string().optional(),
  model: z.string().optional(),
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullable().optional(),
          refusal: z.string().nullable().optional(),
          tool_calls: z.array(ToolCallSchema).nullable().optional(),
        }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1),
  usage: z
    .object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional() })
    .nullable()
    .optional(),
});

/** A model behind an OpenAI-compatible Chat Completions API. */
export class OpenAIChatProvider implements ModelProvider {
  readonly name: string;
  readonly model: string;
  readonly #options: OpenAIChatProviderOptions;
  readonly #url: string;
  readonly #describe: string;
  readonly #reported = new WeakSet<object>();

  constructor(options: OpenAIChatProviderOptions) {
    parseOptions(OptionsSchema, options, 'OpenAIChatProvider');
    this.#options = { ...options };
    this.model = options.model;
    this.name = options.providerName ?? 'openai';
    const base = options.baseURL ?? OPENAI_BASE_URL;
    this.#url = joinUrl(base, 'chat/completions', options.query);
    this.#describe = `the OpenAI-compatible API at ${origin(base)}`;
  }

  /**
   * This provider on `dispatcher` (an engine's shared, guarded one); itself when it was given a `dispatcher` or
   * `fetch` of its own.
   */
  withDispatcher(dispatcher: Dispatcher): OpenAIChatProvider {
    if (this.#options.dispatcher !== undefined || this.#options.fetch !== undefined) return this;
    return new OpenAIChatProvider({ ...this.#options, dispatcher });
  }

  /** The request body for `request`, exactly as it is sent. */
  buildBody(request: Omit<ModelRequest, 'signal'>): Record<string, unknown> {
    const o = this.#options;
    const tools = convertTools(
      request.tools,
      this.#describe,
      o.onWarning,
      this.#reported,
      (tool, schema) => ({
        type: 'function',
        function: {
          name: tool.name,
          ...(tool.description === '' ? {} : { description: tool.description }),
          parameters: schema,
        },
      }),
    );
    return {
      model: this.model,
      messages: toOpenAIMessages(request.instructions, request.messages),
      ...(tools.length > 0 ? { tools } : {}),
      ...(o.maxTokens === undefined ? {} : { max_tokens: o.maxTokens }),
      ...(o.temperature === undefined ? {} : { temperature: o.temperature }),
      ...o.extraBody,
    };
  }

  async generate(request: ModelRequest): Promise<ModelResponse> {
    const o = this.#options;
    const auth: Record<string, string> =
      o.apiKey === undefined
        ? {}
        : o.apiKeyHeader === 'api-key'
          ? { 'api-key': o.apiKey }
          : { authorization: `Bearer ${o.apiKey}` };
    const json = await postJson({
      provider: this.name,
      describe: this.#describe,
      url: this.#url,
      body: this.buildBody(request),
      signal: request.signal,
      headers: { ...o.headers, ...auth },
      timeoutMs: o.timeoutMs,
      maxRetries: o.maxRetries,
      dispatcher: o.dispatcher,
      fetch: o.fetch,
      readError,
    });
    return this.#parse(json);
  }

  #parse(json: unknown): ModelResponse {
    const parsed = ResponseSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ModelProviderError(
        `The answer of ${this.#describe} is not a Chat Completions response (${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}).`,
        { provider: this.name },
      );
    }
    const { choices, usage, id, model } = parsed.data;
    const choice = choices[0] as (typeof choices)[number];
    const message = choice.message;
    const toolCalls = (message.tool_calls ?? []).map((call, i) => toToolCall(call, i, id));
    const refusal = message.content == null && message.refusal != null ? message.refusal : undefined;
    return {
      text: message.content ?? refusal ?? '',
      toolCalls,
      finishReason:
        refusal !== undefined
          ? 'content_filter'
          : toolCalls.length > 0
            ? 'tool_calls'
            : finish(choice.finish_reason),
      usage:
        usage == null
          ? undefined
          : { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens },
      responseId: id,
      model,
    };
  }
}

/**
 * Our messages in Chat Completions form; the instructions become the leading `system` message. A `tool`
 * message takes text only, so the images and audio of tool results (`media`) follow the run of tool messages
 * in one `user` message, each introduced by the call it came from.
 */
export function toOpenAIMessages(
  instructions: string | undefined,
  messages: readonly ModelMessage[],
): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  if (instructions !== undefined && instructions !== '') out.push({ role: 'system', content: instructions });
  let pendingMedia: Record<string, unknown>[] = [];
  const flushMedia = (): void => {
    if (pendingMedia.length > 0) out.push({ role: 'user', content: pendingMedia });
    pendingMedia = [];
  };
  for (const m of messages) {
    if (m.role !== 'tool') flushMedia();
    if (m.role === 'user') {
      out.push({ role: 'user', content: m.content });
    } else if (m.role === 'tool') {
      out.push({ role: 'tool', tool_call_id: m.toolCallId, content: m.content });
      pendingMedia.push(...openAIMediaParts(m));
    } else {
      const calls = m.toolCalls ?? [];
      out.push({
        role: 'assistant',
        content: m.content === '' && calls.length > 0 ? null : m.content,
        ...(calls.length === 0
          ? {}
          : {
              tool_calls: calls.map((c) => ({
                id: c.id,
                type: 'function',
                function: { name: c.name, arguments: c.rawArguments ?? JSON.stringify(c.arguments) },
              })),
            }),
      });
    }
  }
  flushMedia();
  return out;
}

/** Image types Chat Completions reads from a data URL, and the audio formats `input_audio` takes. */
const OPENAI_IMAGE_TYPES: ReadonlySet<string> = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
]);
const OPENAI_AUDIO_FORMATS: Readonly<Record<string, string>> = {
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/wave': 'wav',
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
};

/** A tool result's media as user content parts; types the API does not take stay the text's placeholders. */
function openAIMediaParts(m: ToolResultMessage): Record<string, unknown>[] {
  const parts: Record<string, unknown>[] = [];
  for (const media of m.media ?? []) {
    const type = media.mimeType.toLowerCase();
    const format = OPENAI_AUDIO_FORMATS[type];
    if (media.type === 'image' && OPENAI_IMAGE_TYPES.has(type)) {
      parts.push({ type: 'image_url', image_url: { url: `data:${type};base64,${media.data}` } });
    } else if (media.type === 'audio' && format !== undefined) {
      parts.push({ type: 'input_audio', input_audio: { data: media.data, format } });
    }
  }
  if (parts.length === 0) return [];
  const intro = `The ${parts.length === 1 ? 'media' : `${parts.length} media parts`} returned by tool call ${m.toolCallId} (${m.toolName}):`;
  return [{ type: 'text', text: intro }, ...parts];
}

function toToolCall(
  call: z.infer<typeof ToolCallSchema>,
  index: number,
  responseId: string | undefined,
): ModelToolCall {
  // Some local servers (older llama.cpp) send no id; tool results must still refer to one.
  const id = call.id ?? `call_${responseId ?? 'local'}_${index}`;
  const raw = call.function.arguments;
  if (raw == null || raw === '') return { id, name: call.function.name, arguments: {} };
  if (typeof raw !== 'string') return { id, name: call.function.name, arguments: raw };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    return {
      id,
      name: call.function.name,
      arguments: {},
      rawArguments: raw,
      argumentsError: `the arguments are not valid JSON (${(err as Error).message})`,
    };
  }
  if (!isJsonObject(value)) {
    return {
      id,
      name: call.function.name,
      arguments: {},
      rawArguments: raw,
      argumentsError: 'the arguments are not a JSON object',
    };
  }
  return { id, name: call.function.name, arguments: value as Record<string, unknown>, rawArguments: raw };
}

function finish(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'stop':
      return 'stop';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'other';
  }
}

function readError(json: unknown): { message?: string; type?: string } {
  const error = (json as { error?: unknown } | null)?.error;
  if (typeof error === 'string') return { message: error };
  if (typeof error === 'object' && error !== null) {
    const e = error as { message?: unknown; type?: unknown; code?: unknown };
    return {
      ...(typeof e.message === 'string' ? { message: e.message } : {}),
      ...(typeof e.type === 'string' ? { type: e.type } : typeof e.code === 'string' ? { type: e.code } : {}),
    };
  }
  return {};
}
