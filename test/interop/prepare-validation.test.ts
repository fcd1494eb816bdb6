/**
 * The one-time part of checking a tool call's arguments (loading Ajv, compiling the JSON Schema 2020-12 meta-schema:
 * tens of milliseconds) runs while a server starts, not in the process's first tool call (issue 15, warm-up). Each
 * test file runs in a fresh module graph, so nothing has prepared validation before this file connects.
 */
import { describe, expect, it, vi } from 'vitest';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { validationPrepared } from '../../src/tools/validate.js';
import { nodeFixture } from '../helpers/fixtures.js';
import { CONDITION_TIMEOUT_MS } from '../helpers/wait.js';

describe('argument checking, prepared while a server starts', () => {
  it('is prepared by connecting, before any tool is called, and still refuses bad arguments', async () => {
    expect(validationPrepared()).toBe(false);
    const capabilities = new CapabilitySet();
    capabilities.grant('mcp:echo:*', 'execute');
    await using manager = new MCPClientManager({ capabilities });
    expect(validationPrepared()).toBe(false);
    await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo') });
    // No call made: only the connect can have prepared it.
    await vi.waitFor(() => expect(validationPrepared()).toBe(true), { timeout: CONDITION_TIMEOUT_MS });
    await expect(manager.executeTool('mcp__echo__echo', { text: 'hello' })).resolves.toBe('hello');
    await expect(manager.executeTool('mcp__echo__echo', { text: 42 })).rejects.toMatchObject({
      code: 'INVALID_TOOL_INPUT',
    });
  });
});
