/**
 * A global `Response` whose body was read whole before it was handed out. Most MCP answers over HTTP are one small
 * JSON document: wrapping the socket's body in a web `ReadableStream` and reading it back through that stream was
 * about a fifth of the client CPU of a tool call over Streamable HTTP (issue 15, `bench/profile.ts --server http`:
 * on Node 20 every `ReadableStream` is made transferable, and the Response constructor builds two). The bytes are
 * kept instead, and a stream is built only if someone asks for `body`.
 *
 * It behaves as a Response to its callers: `instanceof Response`, one read of the body (a second rejects with a
 * TypeError, as fetch's does), `bodyUsed`, `clone()`, and `body` as a stream of the bytes not yet read.
 */

const utf8 = new TextDecoder();

/** Node's `Response` as a base class: its typings declare the methods as properties, which a subclass cannot override. */
const ResponseBase = Response as unknown as new (body: null, init: ResponseInit) => object;

class BufferedResponse extends ResponseBase {
  /** The body not yet read: undefined once read without a stream (the body is used), or handed to {@link #streamed}. */
  #bytes: Uint8Array | undefined;
  /** A response over a stream of the bytes, once someone asked for `body` or for a body format read through it. */
  #streamed: Response | undefined;
  readonly #init: ResponseInit;
  readonly #url: string;

  constructor(bytes: Uint8Array, init: ResponseInit, url: string) {
    super(null, init);
    this.#bytes = bytes;
    this.#init = init;
    this.#url = url;
  }

  get url(): string {
    return this.#url;
  }

  get body(): ReadableStream<Uint8Array> | null {
    return this.#stream().body;
  }

  get bodyUsed(): boolean {
    return this.#streamed === undefined ? this.#bytes === undefined : this.#streamed.bodyUsed;
  }

  async text(): Promise<string> {
    if (this.#streamed !== undefined) return await this.#streamed.text();
    return utf8.decode(this.#take());
  }

  async json(): Promise<unknown> {
    if (this.#streamed !== undefined) return await this.#streamed.json();
    return JSON.parse(utf8.decode(this.#take())) as unknown;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    if (this.#streamed !== undefined) return await this.#streamed.arrayBuffer();
    const bytes = this.#take();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return new Uint8Array(await this.arrayBuffer());
  }

  async blob(): Promise<Blob> {
    return await this.#stream().blob();
  }

  async formData(): Promise<FormData> {
    return await this.#stream().formData();
  }

  clone(): Response {
    if (this.bodyUsed) throw new TypeError('Response.clone: Body has already been consumed.');
    if (this.#streamed !== undefined) {
      const copy = this.#streamed.clone();
      Object.defineProperty(copy, 'url', { value: this.#url });
      return copy;
    }
    return bufferedResponse(this.#bytes as Uint8Array, this.#init, this.#url);
  }

  /** The bytes, for a read without a stream; the body is used after it. */
  #take(): Uint8Array {
    const bytes = this.#bytes;
    if (bytes === undefined) throw new TypeError('Body is unusable: Body has already been read');
    this.#bytes = undefined;
    return bytes;
  }

  /** The response over a stream of the bytes not yet read; if they were read, its body is used as well. */
  #stream(): Response {
    if (this.#streamed === undefined) {
      const bytes = this.#bytes;
      this.#bytes = undefined;
      const streamed = new Response(bytes ?? new Uint8Array(0), this.#init);
      if (bytes === undefined) void streamed.body?.getReader().read();
      this.#streamed = streamed;
    }
    return this.#streamed;
  }
}

/** A response of `bytes`, already read from the network, as fetch would have answered it from `url`. */
export function bufferedResponse(bytes: Uint8Array, init: ResponseInit, url: string): Response {
  return new BufferedResponse(bytes, init, url) as unknown as Response;
}
