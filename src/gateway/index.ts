/**
 * `mcp-interlock/gateway`: the project's servers as one MCP server for any client (issue 17), every call gated
 * per caller. Any new export added here becomes public API.
 */

export {
  type ApiKeyConfig,
  DEFAULT_DRAIN_TIMEOUT_MS,
  DEFAULT_GATEWAY_HOST,
  DEFAULT_GATEWAY_PATH,
  type GatewayConfig,
  type GatewayConfigInput,
  GatewayConfigSchema,
  type JwtAuthConfig,
  type PrincipalBinding,
} from '../config/gateway.js';
export type { ServerRequestRelayOptions } from '../config/gateway-relay.js';
export { PrincipalPolicies } from './bindings.js';
export { Gateway, type GatewayAddress, type GatewayOptions } from './gateway.js';
export { GatewayMetrics } from './metrics.js';
export { createPrincipalVerifier, type Principal, type PrincipalVerifierOptions } from './principals.js';
export { ServerRequestRelay } from './relay.js';
export type { GatewayCallObserver } from './server.js';
