/** The gateway guide's samples (docs/snippets/gateway/): the embedded gateway runs; the project file loads. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as embedded from '../../docs/snippets/gateway/embedded.js';
import { loadInterlockConfig } from '../../src/config/load.js';
import { Gateway } from '../../src/gateway/gateway.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { ROOT } from '../cli/helpers.js';

const SNIPPETS = join(ROOT, 'docs/snippets/gateway');

describe('gateway snippets', () => {
  it('embedded: the reader sees read_note only, and a write is refused', async () => {
    const result = await embedded.main(join(ROOT, 'examples/servers/notes-server.mjs'));
    expect(result).toEqual({ tools: ['mcp__notes__read_note'], writeRefused: true });
  });

  it('interlock.config.yaml: loads, and its bindings derive from its policy', async () => {
    const config = await loadInterlockConfig({
      file: 'interlock.config.yaml',
      cwd: SNIPPETS,
      env: {
        CI_GATEWAY_KEY: 'a-ci-key-from-the-environment-0123',
        METRICS_KEY: 'a-metrics-key-from-the-environment',
      },
    });
    expect(config.gateway?.auth?.jwt?.issuer).toBe('https://login.example.com');
    expect(config.secrets).toContain('a-ci-key-from-the-environment-0123');
    // The gateway derives every binding at start: one that exceeds the policy would throw here.
    const manager = new MCPClientManager({ capabilities: CapabilitySet.fromPolicy(config.policy) });
    await using gateway = new Gateway({ manager, config: config.gateway });
    expect(gateway.config.principals).toHaveLength(2);
    expect(gateway.config.operators).toEqual({ apiKey: { subjects: ['prometheus'] } });
    expect(gateway.config.serverRequests).toMatchObject({
      maxParkedCallsPerPrincipal: 8,
      maxParkedCalls: 500,
    });
    expect(gateway.config.flow).toEqual({
      maxStates: 2048,
      idleTimeoutMs: 3_600_000,
      maxIndexedChars: 131_072,
    });
    await manager.close();
  });

  it('claude_desktop_config.json: one command line that runs interlock serve', () => {
    const config = JSON.parse(readFileSync(join(SNIPPETS, 'claude_desktop_config.json'), 'utf8')) as {
      mcpServers: Record<string, { command: string; args: string[] }>;
    };
    expect(config.mcpServers.interlock?.args.at(-1)).toBe('serve');
  });
});
