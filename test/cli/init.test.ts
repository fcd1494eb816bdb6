/**
 * `interlock init` (issue 39) as a real process in a temp folder: the file it writes loads with the project's
 * own loader, takes its servers from the folder's mcp.json, allows nothing, and is never written over unless
 * asked to.
 */
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadInterlockConfig, loadPolicyFile } from '../../src/config/load.js';
import { fixture } from '../helpers/fixtures.js';
import { allGone, type CliResult, json, ROOT, runCli, type TempProject, tempProject } from './helpers.js';

let project: TempProject;
const results: CliResult[] = [];

beforeEach(() => {
  project = tempProject();
});

afterEach(async () => {
  expect(await allGone(results.splice(0).flatMap((r) => r.descendants))).toEqual([]);
  project.close();
});

async function cli(args: string[]): Promise<CliResult> {
  const result = await runCli(args, { cwd: project.dir });
  results.push(result);
  return result;
}

const echoServer = () => ({ command: process.execPath, args: [fixture('echo')] });
const written = () => readFileSync(`${project.dir}/interlock.config.yaml`, 'utf8');

describe('interlock init', () => {
  it("takes the servers of ./.mcp.json, and 'interlock tools' then shows every tool denied", async () => {
    project.write('.mcp.json', { mcpServers: { echo: echoServer() } });
    const init = await cli(['init']);
    expect(init.stderr).toBe('');
    expect(init.code).toBe(0);
    expect(init.stdout).toContain('Wrote interlock.config.yaml with the servers of ./.mcp.json: echo.');

    const config = await loadInterlockConfig({ cwd: project.dir, env: {} });
    expect(config.servers.map((s) => s.name)).toEqual(['echo']);
    expect(config.policy?.rules).toEqual([]);
    expect(written()).toContain('mcpConfig: ./.mcp.json');

    const tools = await cli(['tools', '--json']);
    expect(tools.code).toBe(0);
    const list = json<{ tools: { name: string; verdict: string; effect: string }[] }>(tools).tools;
    expect(list.length).toBeGreaterThan(0);
    for (const tool of list) expect(tool).toMatchObject({ verdict: 'denied', effect: 'default-deny' });

    const call = await cli(['call', 'mcp__echo__echo', '--args', '{"message":"hi"}']);
    expect(call.code).toBe(3);
  }, 120_000);

  it('says in comments how to allow: the rule syntax for tools, resources and prompts', async () => {
    project.write('.mcp.json', { mcpServers: { echo: echoServer() } });
    expect((await cli(['init'])).code).toBe(0);
    const text = written();
    expect(text).toContain('rules: []');
    expect(text).toMatch(/^# +resource: mcp:echo:read_\*/m);
    expect(text).toMatch(/^# +resource: mcp-resource:echo:/m);
    expect(text).toMatch(/^# +resource: mcp-prompt:echo:\*/m);
    expect(text).toMatch(/^# +actions: execute/m);
  });

  it('writes the file the CLI guide shows for its mcp.json', async () => {
    const shown = join(ROOT, 'docs/snippets/cli/init');
    copyFileSync(join(shown, 'mcp.json'), join(project.dir, 'mcp.json'));
    expect((await cli(['init'])).code).toBe(0);
    expect(written()).toBe(readFileSync(join(shown, 'interlock.config.yaml'), 'utf8'));
  });

  it('its commented example rules load as the policy once uncommented', async () => {
    project.write('.mcp.json', { mcpServers: { echo: echoServer() } });
    expect((await cli(['init'])).code).toBe(0);
    const text = written();
    const lines = text.split('\n');
    const example = lines
      .slice(lines.indexOf('#   rules:'), lines.indexOf('policy:'))
      .map((line) => `  ${line.slice(4)}`);
    project.write('interlock.config.yaml', text.replace('  rules: []', example.join('\n')));
    const config = await loadInterlockConfig({ cwd: project.dir, env: {} });
    expect(config.policy?.rules.map((r) => r.id)).toEqual([
      'echo-read',
      'echo-write-drafts',
      'echo-docs',
      'echo-prompts',
    ]);
  });

  it("renames a VS Code mcp.json's server whose name Interlock cannot use, and the file loads", async () => {
    project.write('.vscode/mcp.json', { servers: { 'my.echo': echoServer() } });
    const init = await cli(['init', '--json']);
    expect(init.code).toBe(0);
    expect(json(init)).toMatchObject({
      mcpConfig: './.vscode/mcp.json',
      servers: [{ name: 'my.echo', as: 'my_echo' }],
    });
    const config = await loadInterlockConfig({ cwd: project.dir, env: {} });
    expect(config.servers.map((s) => s.name)).toEqual(['my_echo']);
  });

  it('writes a file that loads with no servers yet when the folder has no mcp.json', async () => {
    const init = await cli(['init']);
    expect(init.code).toBe(0);
    expect(init.stdout).toContain('no mcp.json here, so add your servers under mcpServers');
    const config = await loadInterlockConfig({ cwd: project.dir, env: {} });
    expect(config.servers).toEqual([]);
    expect(config.policy?.rules).toEqual([]);
  });

  it('refuses to write over an existing project file (exit 2) and does with --force', async () => {
    project.write('interlock.config.yaml', 'mine: true\n');
    const refused = await cli(['init']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('interlock.config.yaml already exists');
    expect(refused.stderr).toContain('interlock init --force');
    expect(written()).toBe('mine: true\n');

    const forced = await cli(['init', '--force']);
    expect(forced.code).toBe(0);
    expect(written()).toContain('rules: []');
  });

  it('refuses when another project file name is here already, which would be read instead', async () => {
    project.write('interlock.config.json', { mcpServers: {} });
    const refused = await cli(['init']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('interlock.config.json already exists');
  });

  it('is what a command run without a project file points at', async () => {
    const result = await cli(['tools']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('No project file in');
    expect(result.stderr).toContain("hint: 'interlock init' writes one here");
  });

  it.each(['assistant', 'coding-agent', 'payments'])(
    '--template %s starts the policy from that template, comments and all, and the file loads',
    async (name) => {
      const init = await cli(['init', '--template', name]);
      expect(init.stderr).toBe('');
      expect(init.code).toBe(0);
      expect(init.stdout).toContain(`Its policy is the ${name} template.`);
      const config = await loadInterlockConfig({ cwd: project.dir, env: {} });
      const template = await loadPolicyFile(join(ROOT, 'policies/templates', `${name}.yaml`), { env: {} });
      expect(config.policy).toEqual(template);
      expect(config.policy?.rules.length).toBeGreaterThan(5);
      expect(written()).toContain('  # Interlock policy template:');
    },
    120_000,
  );

  it('names the templates when --template names none of them (exit 2), and writes nothing', async () => {
    const refused = await cli(['init', '--template', 'banking']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("There is no policy template 'banking'");
    expect(refused.stderr).toContain('assistant, coding-agent, payments');
    expect(existsSync(join(project.dir, 'interlock.config.yaml'))).toBe(false);
  });

  it('names the file when --from is not an mcp.json (exit 2)', async () => {
    project.write('other.json', { hello: 1 });
    const refused = await cli(['init', '--from', 'other.json']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('has no "mcpServers"');
  });
});
