// Every reliability knob of one server, with its default. Only `name`, `transport` and the transport's own
// fields are required.
import type { MCPServerConfigInput } from 'mcp-interlock/interop';

export const server: MCPServerConfigInput = {
  name: 'github',
  transport: 'http',
  url: 'https://mcp.example.com/mcp',
  timeoutMs: 60_000, // per request; progress notifications reset it
  maxTotalTimeoutMs: 300_000, // optional cap on a whole call, progress or not
  connectTimeoutMs: 30_000, // spawn or handshake, initialize and discovery
  reconnect: {
    enabled: true,
    maxAttempts: 5, // Infinity (or "Infinity" in files) never gives up
    initialDelayMs: 250,
    maxDelayMs: 30_000,
    factor: 2,
    jitter: 'full', // a random delay between 0 and the computed one
  },
  maxConcurrentCalls: 16, // default: unlimited
  maxQueuedCalls: 100, // beyond: OVERLOADED at once
  tools: { idempotent: ['get_*', 'search_*'] }, // re-sent after a reconnect; nothing else ever is
};
