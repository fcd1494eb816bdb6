/**
 * What the adapter tests share: a manager connected to the real server-everything over stdio, behind a policy
 * that allows `echo` except for secrets and allows `get-tiny-image`, and a way to count what reached it.
 */
import { afterAll, beforeAll } from 'vitest';
import { MCPClientManager } from '../../src/interop/manager.js';
import { MemoryAuditSink } from '../../src/security/audit.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { EVERYTHING_BIN } from '../helpers/http-fixtures.js';

export const ECHO = 'mcp__everything__echo';
export const TINY_IMAGE = 'mcp__everything__get-tiny-image';
export const GET_SUM = 'mcp__everything__get-sum';
/** The reason the policy gives for refusing a secret; the model must be able to read it. */
export const SECRET_REASON = 'Secrets never leave this machine.';

export interface EverythingSetup extends AsyncDisposable {
  manager: MCPClientManager;
  audit: MemoryAuditSink;
  /** Calls the manager sent to server-everything so far (denied calls are never sent). */
  sentCalls(): number;
  close(): Promise<void>;
}

/** The test policy: `echo` except for secrets, and `get-tiny-image`. */
export function testPolicy(): CapabilitySet {
  const capabilities = new CapabilitySet();
  capabilities.grant('mcp:everything:echo', 'execute');
  capabilities.grant('mcp:everything:get-tiny-image', 'execute');
  capabilities.deny('mcp:everything:echo', 'execute', {
    id: 'no-secrets',
    description: SECRET_REASON,
    when: { args: { message: { startsWith: 'secret' } } },
  });
  return capabilities;
}

/** Connects server-everything (stdio) behind `capabilities`. @default the test policy */
export async function connectEverything(capabilities = testPolicy()): Promise<EverythingSetup> {
  const audit = new MemoryAuditSink();
  const manager = new MCPClientManager({ capabilities, audit });
  await manager.connectServer({
    name: 'everything',
    transport: 'stdio',
    command: process.execPath,
    args: [EVERYTHING_BIN, 'stdio'],
  });
  return {
    manager,
    audit,
    sentCalls: () => manager.health().everything?.calls ?? 0,
    close: () => manager.close(),
    [Symbol.asyncDispose]: () => manager.close(),
  };
}

/**
 * Connects server-everything before the suite's tests and closes it after them. The returned setup reads the
 * live one, so tests use it directly.
 */
export function useEverything(): EverythingSetup {
  let setup: EverythingSetup | undefined;
  beforeAll(async () => {
    setup = await connectEverything();
  });
  afterAll(async () => {
    await setup?.close();
  });
  const current = (): EverythingSetup => {
    if (setup === undefined)
      throw new Error('server-everything is not connected yet (use it inside a test).');
    return setup;
  };
  return {
    get manager() {
      return current().manager;
    },
    get audit() {
      return current().audit;
    },
    sentCalls: () => current().sentCalls(),
    close: () => current().close(),
    [Symbol.asyncDispose]: () => current().close(),
  };
}

/** The tiny PNG server-everything's `get-tiny-image` returns starts with these base64 characters. */
export const PNG_BASE64_PREFIX = 'iVBORw0KGgo';
