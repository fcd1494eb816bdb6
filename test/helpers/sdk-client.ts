// Plain SDK clients connected to fixture servers: witnesses that do not go through Interlock.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type FixtureName, nodeFixture } from './fixtures.js';

/** An SDK client plus what a test needs to check on it. `await using` closes it. */
export interface SdkClientHandle extends AsyncDisposable {
  readonly client: Client;
  /** Pid of the spawned server (stdio only). */
  readonly pid: number | undefined;
  /** Everything the server wrote to stderr so far (stdio only). */
  stderr(): string;
  close(): Promise<void>;
}

function newClient(): Client {
  return new Client({ name: 'interlock-fixture-test', version: '0.0.0' }, { capabilities: {} });
}

/** Spawns a fixture over stdio (stderr captured, env = SDK defaults + `env`) and connects a client. */
export async function connectStdioFixture(
  name: FixtureName,
  {
    env = {},
    args = [],
    timeoutMs = 10_000,
  }: { env?: Record<string, string>; args?: string[]; timeoutMs?: number } = {},
): Promise<SdkClientHandle> {
  const transport = new StdioClientTransport({
    ...nodeFixture(name, args),
    env: { ...getDefaultEnvironment(), ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const client = newClient();
  const close = () => client.close();
  try {
    await client.connect(transport, { timeout: timeoutMs });
  } catch (err) {
    await close();
    throw Object.assign(new Error(`connect to ${name} failed: ${(err as Error).message}\n${stderr}`), {
      cause: err,
    });
  }
  return {
    client,
    pid: transport.pid ?? undefined,
    stderr: () => stderr,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** Connects an SDK client over Streamable HTTP or legacy SSE to `url`. */
export async function connectHttpClient(
  url: string,
  kind: 'streamable' | 'sse',
  { timeoutMs = 10_000 }: { timeoutMs?: number } = {},
): Promise<SdkClientHandle> {
  const transport =
    kind === 'streamable'
      ? new StreamableHTTPClientTransport(new URL(url))
      : new SSEClientTransport(new URL(url));
  const client = newClient();
  const close = () => client.close();
  try {
    await client.connect(transport, { timeout: timeoutMs });
  } catch (err) {
    await close();
    throw err;
  }
  return { client, pid: undefined, stderr: () => '', close, [Symbol.asyncDispose]: close };
}
