/**
 * Raw HTTP requests to a gateway's MCP endpoint. One 2026-07-28 `tools/call` request sent as raw HTTP to a gateway, the way a client answering an `input_required`
 * round sends it (with `inputResponses` and `requestState` among `params` when it answers), and the JSON-RPC
 * message that came back, whether as JSON or as one SSE event.
 */

/** The `_meta` a 2026-07-28 client that can answer form elicitations sends with each request. */
export const MODERN_CLIENT_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
};

/**
 * One JSON-RPC message POSTed to an MCP endpoint as a 2025-era client sends it: JSON, accepting JSON or an event
 * stream, with bearer `token` when given and any `headers` besides.
 */
export function rawPost(
  url: URL,
  message: unknown,
  token?: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...headers,
    },
    body: JSON.stringify(message),
  });
}

/** A JSON-RPC answer: its result, or its error. */
export interface RawAnswer {
  result?: Record<string, unknown>;
  error?: { code?: number; message: string };
}

/** Sends `params` (a tool name, its arguments, and any answers) as one `tools/call` to `url` with bearer `key`. */
export async function rawToolCall(
  url: URL,
  key: string,
  params: Record<string, unknown>,
): Promise<RawAnswer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': String(params.name),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { ...params, _meta: MODERN_CLIENT_META },
    }),
  });
  const text = await response.text();
  const line = text.split('\n').find((l) => l.startsWith('data: ')) ?? text;
  return JSON.parse(line.replace(/^data: /, '')) as RawAnswer;
}
