/**
 * Issue 18, item 10: `interlock call echo` points at the exposed name form, `mcp__echo__echo`. Issue 39: a tool's
 * own name that several servers have is called ambiguous, with every full name.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fixture } from '../helpers/fixtures.js';
import { json, runCli, type TempProject, tempProject } from './helpers.js';

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

  it('says a name three servers have is ambiguous and lists every full name, not "No tool named"', async () => {
    const p = tempProject();
    projects.push(p);
    const echo = { command: process.execPath, args: [fixture('echo')] };
    p.write('interlock.config.yaml', { mcpServers: { a: echo, b: echo, c: echo } });
    const result = await runCli(['tools', 'add'], { cwd: p.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "'add' is ambiguous: 3 servers have a tool named 'add': mcp__a__add, mcp__b__add, mcp__c__add. Name one in full.",
    );
    expect(result.stderr).not.toContain('No tool named');

    // The tools table follows the file's server order (c, a, b here), not the order the servers finished connecting.
    p.write('interlock.config.yaml', { mcpServers: { c: echo, a: echo, b: echo } });
    const listed = json<{ tools: { server: string }[] }>(await runCli(['tools', '--json'], { cwd: p.dir }));
    const servers = listed.tools.map((t) => t.server).filter((s, i, all) => all[i - 1] !== s);
    expect(servers).toEqual(['c', 'a', 'b']);
  });
});
