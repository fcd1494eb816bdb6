/**
 * `mcp-interlock/gateway`: the project's servers as one MCP server for any client (issue 17), every call gated
 * per caller. Any new export added here becomes public API.
 */

export {
  type GatewayConfig,
  type GatewayConfigInput,
  GatewayConfigSchema,
} from '../config/gateway.js';
export type { ServerRequestRelayOptions } from '../config/gateway-relay.js';
export { PrincipalPolicies } from './bindings.js';
export { Gateway, type GatewayAddress, type GatewayOptions } from './gateway.js';
export { GatewayMetrics } from './metrics.js';
export { createPrincipalVerifier, type Principal, type PrincipalVerifierOptions } from './principals.js';
export { ServerRequestRelay } from './relay.js';
