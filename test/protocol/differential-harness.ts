/**
 * The two sides of the differential test against the SDK (issue 43): the SDK's own `Client.callTool`
 * (@modelcontextprotocol/client) and Interlock's path (an `MCPClientManager`, public entry points only), each on
 * its own connection to the same scripted hostile server (test/fixtures/servers/hostile-answers.mjs), in one
 * protocol era over stdio or Streamable HTTP. A case is a list of frames the server replays as its answer.
 *
 * What the two settle with is put in one shape before it is compared ({@link Outcome}). Each normalization, and why:
 * - A value: the SDK's `CallToolResult` goes through `toToolCallResult` (the function Interlock's call path
 *   itself ends with) with the same `maxResultChars`, because Interlock's public result is that projection: text,
 *   isError, every content block as the server sent it, and structuredContent. The result's `_meta` and unknown
 *   top-level keys are not part of Interlock's public result, so they cannot be compared through public entry points.
 * - An error the SDK raised: Interlock wraps it in a coded error (`mapRequestError`) with the SDK's error as `cause`.
 *   The cause is compared with the SDK's error field by field (class name, code, message, data), and the wrapper's
 *   code is checked against the kind of failure it reports ({@link wrapperCodes}).
 * - An output-schema refusal: the SDK raises a `ProtocolError` with its own message, Interlock a
 *   `ToolOutputError` (INVALID_TOOL_OUTPUT) that names each failing field. Both become `{ output: 'missing' }` or
 *   `{ output: 'mismatch', fields }`, the failing fields as JSON pointers: the same verdict on the same value, and
 *   the same fields named, though each library words it its own way.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { expect } from 'vitest';
import { MCPClientManager, type MCPServerConfigInput } from '../../src/interop/index.js';
import { CapabilitySet } from '../../src/security/index.js';
import { toToolCallResult } from '../../src/tools/normalize.js';
import { nodeFixture } from '../helpers/fixtures.js';
import { type HttpServerProcess, startHostileHttp } from '../helpers/http-fixtures.js';

export type Era = '2025-11-25' | '2026-07-28';
export type Wire = 'stdio' | 'http';
export const ERAS: readonly Era[] = ['2025-11-25', '2026-07-28'];
export const WIRES: readonly Wire[] = ['stdio', 'http'];

/** One message the server sends in answer (see hostile-answers.mjs). */
export type Frame =
  | { result: unknown; id?: unknown }
  | { error: unknown; id?: unknown }
  | { message: Record<string, unknown> }
  | { notify: string; params?: unknown }
  | { request: string; params?: unknown }
  | { raw: string }
  | { bigText: number }
  | { deepStructured: number };

/** The request timeout on both sides: generous, so a loaded machine never times out a case that has its answer. */
const CALL_TIMEOUT_MS = 30_000;
/** The timeout of a case that is meant to time out, on both sides. */
export const SHORT_TIMEOUT_MS = 1_000;
/** The same cap on both sides' text (the default, spelt out). */
const MAX_RESULT_CHARS = 100_000;
const SERVER = 'hostile';

/** How a call settled, in the one shape both sides are compared in. */
export type Outcome =
  | { value: unknown }
  | { error: { type: string; code: unknown; message: string; data: unknown } }
  | { output: 'missing' }
  | { output: 'mismatch'; fields: string[] };

/** Both sides connected to one era and wire. `await using` closes both and the server. */
export interface Pair extends AsyncDisposable {
  readonly era: Era;
  readonly wire: Wire;
  readonly sdk: Client;
  readonly manager: MCPClientManager;
  /** Runs one case on both sides at once; resolves to what each settled with. */
  run(
    tool: 'replay' | 'typed',
    frames: readonly Frame[],
    timeoutMs?: number,
  ): Promise<{ sdk: Outcome; ours: Outcome }>;
  close(): Promise<void>;
}

/** Interlock's error code for each kind of SDK error it wraps (see src/interop/request-errors.ts). */
export function wrapperCodes(sdkError: { type: string; code: unknown }): string {
  if (sdkError.type === 'ProtocolError') return 'SERVER_ERROR';
  if (sdkError.code === 'REQUEST_TIMEOUT') return 'REQUEST_TIMEOUT';
  if (sdkError.code === 'CONNECTION_CLOSED') return 'CONNECTION_LOST';
  return 'SERVER_ERROR';
}

function describe(err: unknown): { type: string; code: unknown; message: string; data: unknown } {
  const e = err as Error & { code?: unknown; data?: unknown };
  return {
    type: e?.constructor?.name ?? typeof err,
    code: e?.code,
    message: String(e?.message),
    data: e?.data,
  };
}

const SDK_MISMATCH = "Structured content does not match the tool's output schema: ";

/**
 * The SDK's error for an output-schema refusal, by the two messages its `callTool` words them with. A mismatch
 * names the failing fields in Ajv's words (`data/n must be number`, `data must have required property 'n'`): they
 * become JSON pointers (`/n`), the form Interlock's issues use.
 */
function sdkOutputVerdict(err: unknown): Outcome | undefined {
  const message = err instanceof Error ? err.message : '';
  if (/has an output schema but did not return structured content$/.test(message))
    return { output: 'missing' };
  if (!message.startsWith(SDK_MISMATCH)) return undefined;
  const fields = message
    .slice(SDK_MISMATCH.length)
    .split(', ')
    .map((entry) => {
      const m = /^data(\S*) (?:must have required property '([^']*)')?/.exec(entry);
      return `${m?.[1] ?? ''}${m?.[2] === undefined ? '' : `/${m[2]}`}`;
    });
  return { output: 'mismatch', fields: fields.sort() };
}

async function sdkOutcome(
  client: Client,
  tool: string,
  frames: readonly Frame[],
  timeout: number,
): Promise<Outcome> {
  try {
    const raw = await client.callTool({ name: tool, arguments: { frames } }, { timeout });
    return { value: toToolCallResult(raw, { maxResultChars: MAX_RESULT_CHARS }) };
  } catch (err) {
    return sdkOutputVerdict(err) ?? { error: describe(err) };
  }
}

async function ourOutcome(
  manager: MCPClientManager,
  tool: string,
  frames: readonly Frame[],
  timeoutMs: number,
): Promise<Outcome> {
  const name = manager.tools.find((t) => t.server === SERVER && t.tool === tool)?.name;
  if (name === undefined) throw new Error(`the manager lists no tool '${tool}'`);
  try {
    return { value: await manager.callTool(name, { frames }, { timeoutMs }) };
  } catch (err) {
    const e = err as Error & { code?: unknown; cause?: unknown };
    if (e.code === 'INVALID_TOOL_OUTPUT') {
      if (/is missing, though the tool declares an outputSchema/.test(e.message))
        return { output: 'missing' };
      const issues = (err as { issues?: { field: string }[] }).issues ?? [];
      return { output: 'mismatch', fields: issues.map((i) => i.field).sort() };
    }
    if (!(e.cause instanceof Error))
      return { error: { ...describe(err), type: `own:${describe(err).type}` } };
    const cause = describe(e.cause);
    // The wrapper: the code for the kind of failure, and the SDK's words inside its message.
    expect(e.code, `Interlock's code for ${cause.type} ${String(cause.code)}`).toBe(wrapperCodes(cause));
    if (e.code === 'SERVER_ERROR') expect(e.message).toContain(cause.message);
    return { error: cause };
  }
}

/** Both sides' connections, each attempted on its own: a side that could not connect holds its error. */
export interface Sides extends AsyncDisposable {
  readonly sdk: Client | Error;
  readonly manager: MCPClientManager | Error;
  close(): Promise<void>;
}

async function connectSdk(args: readonly string[], http: HttpServerProcess | undefined): Promise<Client> {
  const sdk = new Client(
    { name: 'differential-sdk', version: '1.0.0' },
    { capabilities: {}, versionNegotiation: { mode: 'auto' } },
  );
  const transport =
    http === undefined
      ? new StdioClientTransport({ ...nodeFixture('hostile-answers', args), stderr: 'pipe' })
      : new StreamableHTTPClientTransport(new URL(http.mcpUrl));
  try {
    await sdk.connect(transport);
    // The SDK client learns the output schemas from the listing, as an application's would.
    await sdk.listTools();
  } catch (err) {
    await sdk.close().catch(() => {});
    throw err;
  }
  return sdk;
}

async function connectManager(
  args: readonly string[],
  http: HttpServerProcess | undefined,
): Promise<MCPClientManager> {
  const capabilities = new CapabilitySet();
  capabilities.grant(`mcp:${SERVER}:*`, 'execute');
  const manager = new MCPClientManager({ capabilities });
  const base = { name: SERVER, timeoutMs: CALL_TIMEOUT_MS, reconnect: { enabled: false } };
  const config: MCPServerConfigInput =
    http === undefined
      ? { ...base, transport: 'stdio', ...nodeFixture('hostile-answers', args) }
      : { ...base, transport: 'http', url: http.mcpUrl };
  try {
    await manager.connectServer(config);
  } catch (err) {
    await manager.close();
    throw err;
  }
  return manager;
}

const asError = (err: unknown) => (err instanceof Error ? err : new Error(String(err)));

/** Starts the hostile server for `era` on `wire` (HTTP: one process for both sides) and connects each side to it. */
export async function connectSides(era: Era, wire: Wire, serverArgs: readonly string[] = []): Promise<Sides> {
  const args = ['--era', era, ...serverArgs];
  const http = wire === 'http' ? await startHostileHttp(args) : undefined;
  const [sdk, manager] = await Promise.all([
    connectSdk(args, http).catch(asError),
    connectManager(args, http).catch(asError),
  ]);
  const close = async () => {
    if (!(manager instanceof Error)) await manager.close();
    if (!(sdk instanceof Error)) await sdk.close();
    await http?.close();
  };
  return { sdk, manager, close, [Symbol.asyncDispose]: close };
}

/** Both sides connected to the hostile server for `era` on `wire`; throws when either side could not connect. */
export async function openPair(era: Era, wire: Wire, serverArgs: readonly string[] = []): Promise<Pair> {
  const sides = await connectSides(era, wire, serverArgs);
  const { sdk, manager, close } = sides;
  if (sdk instanceof Error || manager instanceof Error) {
    await close();
    throw sdk instanceof Error ? sdk : manager;
  }
  return {
    era,
    wire,
    sdk,
    manager,
    run: async (tool, frames, timeoutMs = CALL_TIMEOUT_MS) => {
      const [s, o] = await Promise.all([
        sdkOutcome(sdk, tool, frames, timeoutMs),
        ourOutcome(manager, tool, frames, timeoutMs),
      ]);
      return { sdk: s, ours: o };
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
