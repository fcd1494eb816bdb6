/**
 * What every contender of the benchmark (issue 8) implements: connect some servers, call the same echo tool,
 * close. Each contender lives in `bench/contenders/<id>.ts` and runs in its own process (see `worker.ts`).
 */

/** The servers every contender talks to (`bench/servers/`). */
export type ServerKind = 'stdio-raw' | 'stdio-sdk' | 'http';

/** One server a contender connects to. */
export type ServerSpec =
  | { name: string; transport: 'stdio'; command: string; args: string[] }
  | { name: string; transport: 'http'; url: string };

/** A contender with its servers connected and their tools discovered. */
export interface Session {
  /** Calls the server's `echo` tool with `text` and resolves to the text it answered. */
  call(server: string, text: string): Promise<string>;
  /** Closes every connection (stdio servers end). */
  close(): Promise<void>;
}

/** How a contender gets a stdio server back after it died. */
export type ReconnectSupport =
  /** By itself (or on the next call); the benchmark only has to keep calling. */
  | { kind: 'auto' }
  /** Not at all: the figure is reported as not measurable, with this reason. */
  | { kind: 'none'; reason: string };

/** A contender: one client library, used the way its documentation shows. */
export interface ContenderAdapter {
  /** Id used on the command line and in results (`sdk`, `interlock`, ...). */
  readonly id: string;
  /**
   * Builds what an app builds once, whatever its servers (Interlock: its 1 000-rule capability set), so the
   * memory figure does not count it per server. `connect` calls it when it was not called before.
   */
  prepare?(servers: readonly ServerSpec[]): void;
  /**
   * Connects every server in parallel, the way the library does it for several servers, and resolves once
   * every server's tools are known (discovery included, as an agent needs them).
   */
  connect(servers: readonly ServerSpec[]): Promise<Session>;
  /** What happens after a stdio server is killed. */
  readonly reconnect: ReconnectSupport;
  /** Facts worth reporting about how the contender was set up (e.g. whether a tracer was used). */
  notes?(session: Session): Record<string, string | number | boolean>;
}

/** The text of the first text content block of an MCP `CallToolResult`-like value. */
export function textOf(result: unknown): string {
  if (typeof result === 'string') return result;
  const content = (result as { content?: unknown } | null)?.content;
  if (Array.isArray(content)) {
    const block = content.find((c) => (c as { type?: unknown })?.type === 'text') as
      | { text?: unknown }
      | undefined;
    if (typeof block?.text === 'string') return block.text;
  }
  throw new Error(`No text content in the tool result: ${JSON.stringify(result)?.slice(0, 200)}`);
}
