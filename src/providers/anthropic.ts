/** Anthropic Messages (`POST {baseURL}/v1/messages`, `anthropic-version: 2023-06-01`). */
import type { Dispatcher } from 'undici';
import { z } from 'zod';
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
export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
/** The API version sent in `anthropic-version`. */
export const ANTHROPIC_VERSION = '2023-06-01';
/** Default `max_tokens` (the API requires one). */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

/** Options of {@link AnthropicProvider}. */
export interface AnthropicProviderOptions extends HttpProviderOptions {
  /** The model, e.g. `claude-sonnet-4-5`. */
  model: string;
  /** Sent as `x-api-key`. */
  apiKey?: string | undefined;
  /** The API root; `/v1/messages` is appended. @default ANTHROPIC_BASE_URL */
  baseURL?: string | undefined;
  /** Sent as `max_tokens` (required by the API). @default DEFAULT_ANTHROPIC_MAX_TOKENS (4096) */
  maxTokens?: number | undefined;
  /** Sent as `temperature`. @default not sent */
  temperature?: number | undefined;
  /** Extra body fields (`thinking`, `metadata`, ...), merged last. */
  extraBody?: Readonly<Record<string, unknown>> | undefined;
  /** Told once per tool schema that had to be converted. @default none */
  onWarning?: ((message: string) => void) | undefined;
}

const OptionsSchema = z.object({
  model: z.string().min(1),
  apiKey: z.string().min(1).optional(),
  baseURL: z
    .string()
    .url()
    .refine((u) => /^https?:$/.test(new URL(u).protocol), 'must use http: or https:')
    .optional(),
  maxTokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(1).optional(),
  timeoutMs: z.number().int().positive().optional(),
  maxRetries: z.number().int().min(0).max(10).optional(),
});

const BlockSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({
    type: z.literal('tool_use'),
    id: z.string(),
    name: z.string(),
    input: z.record(z.string(), z.unknown()).nullable().optional(),
  }),
]);

const ResponseSchema = z.object({
  id: z.string().optional(),
  model: z.string().optional(),
  // Thinking and other block types are not ours to act on: kept out, never an error.
  content: z.array(z.looseObject({ type: z.string() })),
  stop_reason: z.string().nullable().optional(),
  usage: z.object({ input_tokens: z.number().optional(), output_tokens: z.number().optional() }).optional(),
});

/** A model behind the Anthropic Messages API. */
export class AnthropicProvider implements ModelProvider {
  readonly name = 'anthropic';
  readonly model: string;
  readonly #options: AnthropicProviderOptions;
  readonly #url: string;
  readonly #describe: string;
  readonly #reported = new WeakSet<object>();

  constructor(options: AnthropicProviderOptions) {
    parseOptions(OptionsSchema, options, 'AnthropicProvider');
    this.#options = { ...options };
    this.model = options.model;
    const base = options.baseURL ?? ANTHROPIC_BASE_URL;
    this.#url = joinUrl(base, 'v1/messages');
    this.#describe = `the Anthropic API at ${origin(base)}`;
  }

  /**
   * This provider on `dispatcher` (an engine's shared, guarded one); itself when it was given a `dispatcher` or
   * `fetch` of its own.
   */
  withDispatcher(dispatcher: Dispatcher): AnthropicProvider {
    if (this.#options.dispatcher !== undefined || this.#options.fetch !== undefined) return this;
    return new AnthropicProvider({ ...this.#options, dispatcher });
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
        name: tool.name,
        ...(tool.description === '' ? {} : { description: tool.description }),
        input_schema: schema,
      }),
    );
    return {
      model: this.model,
      max_tokens: o.maxTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
      ...(request.instructions === undefined || request.instructions === ''
        ? {}
        : { system: request.instructions }),
      messages: toAnthropicMessages(request.messages),
      ...(tools.length > 0 ? { tools } : {}),
      ...(o.temperature === undefined ? {} : { temperature: o.temperature }),
      ...o.extraBody,
    };
  }

  async generate(request: ModelRequest): Promise<ModelResponse> {
    const o = this.#options;
    const json = await postJson({
      provider: this.name,
      describe: this.#describe,
      url: this.#url,
      body: this.buildBody(request),
      signal: request.signal,
      headers: {
        ...o.headers,
        'anthropic-version': ANTHROPIC_VERSION,
        ...(o.apiKey === undefined ? {} : { 'x-api-key': o.apiKey }),
      },
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
    if (!parsed.success) throw this.#malformed(parsed.error);
    const texts: string[] = [];
    const toolCalls: ModelToolCall[] = [];
    for (const raw of parsed.data.content) {
      if (raw.type !== 'text' && raw.type !== 'tool_use') continue;
      const block = BlockSchema.safeParse(raw);
      if (!block.success) throw this.#malformed(block.error);
      if (block.data.type === 'text') texts.push(block.data.text);
      else toolCalls.push({ id: block.data.id, name: block.data.name, arguments: block.data.input ?? {} });
    }
    const { usage, stop_reason, id, model } = parsed.data;
    return {
      text: texts.join(''),
      toolCalls,
      finishReason: toolCalls.length > 0 ? 'tool_calls' : finish(stop_reason),
      usage:
        usage === undefined
          ? undefined
          : { inputTokens: usage.input_tokens, outputTokens: usage.output_tokens },
      responseId: id,
      model,
    };
  }

  #malformed(error: z.ZodError): ModelProviderError {
    const issue = error.issues[0];
    return new ModelProviderError(
      `The answer of ${this.#describe} is not a Messages response (${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}).`,
      { provider: this.name },
    );
  }
}

/** One message of a Messages request: a role, and text or content blocks (`text`, `tool_use`, `tool_result`). */
export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: string | Record<string, unknown>[];
}
type Block = Record<string, unknown>;

/**
 * Our messages in Messages form. Tool results become `tool_result` blocks of a user message; results that
 * follow one another (the answers to one turn's parallel calls) share that one message, as the API requires.
 */
export function toAnthropicMessages(messages: readonly ModelMessage[]): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  const pushUser = (block: Block): void => {
    const last = out[out.length - 1];
    if (last?.role === 'user') {
      if (typeof last.content === 'string') last.content = [{ type: 'text', text: last.content }];
      last.content.push(block);
    } else {
      out.push({ role: 'user', content: [block] });
    }
  };
  for (const m of messages) {
    if (m.role === 'user') {
      const last = out[out.length - 1];
      if (last?.role === 'user') pushUser({ type: 'text', text: m.content });
      else out.push({ role: 'user', content: m.content });
    } else if (m.role === 'tool') {
      const images = anthropicImages(m.media);
      pushUser({
        type: 'tool_result',
        tool_use_id: m.toolCallId,
        content: images.length === 0 ? m.content : [{ type: 'text', text: m.content }, ...images],
        ...(m.isError === true ? { is_error: true } : {}),
      });
    } else {
      const calls = m.toolCalls ?? [];
      if (calls.length === 0) {
        // The API refuses empty text blocks; an empty answer carries nothing to send back.
        if (m.content !== '') out.push({ role: 'assistant', content: m.content });
        continue;
      }
      out.push({
        role: 'assistant',
        content: [
          ...(m.content === '' ? [] : [{ type: 'text', text: m.content }]),
          ...calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.arguments })),
        ],
      });
    }
  }
  return out;
}

/** Image types a Messages `tool_result` can carry; other media stay the text's placeholders. */
const ANTHROPIC_IMAGE_TYPES: ReadonlySet<string> = new Set([
  'image/jpeg',
  'image/png',
  'image/gif',
  'image/webp',
]);

/** A tool result's images as Messages `image` blocks (base64 source). */
function anthropicImages(media: ToolResultMessage['media']): Block[] {
  return (media ?? [])
    .filter((m) => m.type === 'image' && ANTHROPIC_IMAGE_TYPES.has(m.mimeType.toLowerCase()))
    .map((m) => ({
      type: 'image',
      source: { type: 'base64', media_type: m.mimeType.toLowerCase(), data: m.data },
    }));
}

function finish(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'tool_use':
      return 'tool_calls';
    case 'max_tokens':
      return 'length';
    case 'refusal':
      return 'content_filter';
    default:
      return 'other';
  }
}

function readError(json: unknown): { message?: string; type?: string } {
  const error = (json as { error?: unknown } | null)?.error;
  if (typeof error !== 'object' || error === null) return {};
  const e = error as { message?: unknown; type?: unknown };
  return {
    ...(typeof e.message === 'string' ? { message: e.message } : {}),
    ...(typeof e.type === 'string' ? { type: e.type } : {}),
  };
}
