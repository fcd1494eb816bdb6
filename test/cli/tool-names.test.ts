/** Issue 18, item 10: `interlock call echo` points at the exposed name form, `mcp__echo__echo`. */
import { afterEach, describe, expect, it } from 'vitest';
import { fixture } from '../helpers/fixtures.js';
import { runCli, type TempProject, tempProject } from './helpers.js';

const projects: TempProject[] = [];
afterEach(() => {
  for (const p of projects.splice(0)) p.close();
});

describe('calling a tool by its own name', () => {
  it('suggests the exposed name and explains the mcp__{server}__{tool} form', async () => {
    const p = tempProject();
    projects.push(p);
    p.write('interlock.config.yaml', {
      mcpServers: { echo: { command: process.execPath, args: [fixture('echo')] } },
      policy: { version: 1, rules: [{ effect: 'allow', resource: 'mcp:echo:echo', actions: 'execute' }] },
    });
    const result = await runCli(['call', 'echo', '--args', '{"text":"hi"}'], { cwd: p.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Did you mean 'mcp__echo__echo'?");
    expect(result.stderr).toContain('tools are named mcp__{server}__{tool}');
  });
});
