/**
 * HTTP for the Streamable HTTP and SSE transports: undici's fetch over one keep-alive dispatcher per manager,
 * unless the caller brings its own fetch.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { Agent, fetch as undiciFetch } from 'undici';

/** A fetch and what it takes to release it. */
export interface HttpClient {
  fetch: FetchLike;
  close(): Promise<void>;
}

/** undici's fetch with a shared dispatcher the manager closes; or `custom` as given (the caller owns it). */
export function createHttpFetch(custom?: FetchLike): HttpClient {
  if (custom !== undefined) return { fetch: custom, close: async () => {} };
  let agent: Agent | undefined;
  const fetch: FetchLike = (url, init) => {
    agent ??= new Agent({ keepAliveTimeout: 10_000, connections: 64 });
    // undici's Request/Response types are the web ones Node's global fetch uses; only the type names differ.
    return undiciFetch(url, { ...(init as object), dispatcher: agent }) as unknown as Promise<Response>;
  };
  return {
    fetch,
    close: async () => {
      const a = agent;
      agent = undefined;
      await a?.destroy().catch(() => {});
    },
  };
}
