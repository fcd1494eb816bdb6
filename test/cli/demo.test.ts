/**
 * `interlock demo`: the bundled example servers (stdio and Streamable HTTP), the sample policy and the
 * scripted agent. No project file, no keys, no network; nothing left running afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDemo } from '../../src/cli/demo/run.js';
import { InterruptedError } from '../../src/cli/exit.js';
import { descendantPids } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';
import { allGone, json, runCli, type TempProject, tempProject } from './helpers.js';

let empty: TempProject;

beforeAll(() => {
  empty = tempProject();
});
afterAll(() => empty.close());

interface DemoJson {
  servers: { name: string; transport: string; state: string; tools: string[] }[];
  steps: { call: string; allowed: boolean; rule: string | null; output: string; hint?: string }[];
  audit: { effect: string; resource: string; ruleId?: string; argumentKeys: string[] }[];
}

describe('interlock demo', () => {
  it('shows an allowed call, a denial with its reason, an argument constraint and the audit trail', async () => {
    const result = await runCli(['demo'], { cwd: empty.dir });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out).toMatch(/notes\s+stdio.*tools: list_notes, read_note, write_note, delete_note/);
    expect(out).toMatch(/weather\s+http.*tools: get_forecast, set_alert/);
    expect(out).toContain("allowed by rule 'notes-list'");
    expect(out).toContain(
      "denied  Denied by rule 'no-deletes' (mcp:notes:delete_*): no agent deletes notes.",
    );
    expect(out).toContain(
      `Rule 'notes-write-drafts' (agents may only write drafts) allows 'execute' on 'mcp:notes:write_note' only when id starts with "drafts/"; for this call argument 'id' does not start with "drafts/" (default deny).`,
    );
    // Issue 39: each condition sentence once, not again as a note under the denial.
    expect(out.match(/only when id starts with "drafts\/"/g)).toHaveLength(1);
    expect(out.match(/only when city is one of/g)).toHaveLength(1);
    expect(out).toContain("denied  No rule allows 'execute' on 'mcp:weather:set_alert' (default deny).\n");
    expect(out).not.toMatch(/grant\(|manager\./); // people get no library calls to make
    expect(out).toContain('Audit trail (argument names only, never their values)');
    expect(out).not.toContain('\u001b['); // not a terminal
    expect(await allGone(result.descendants)).toEqual([]);
    expect(result.servers.length).toBeGreaterThanOrEqual(2); // it did start both servers
  });

  it('prints every step and audit record as JSON, values never audited', async () => {
    const result = await runCli(['demo', '--json'], { cwd: empty.dir });
    expect(result.code).toBe(0);
    const demo = json<DemoJson>(result);
    expect(demo.servers.map((s) => [s.name, s.transport, s.state])).toEqual([
      ['notes', 'stdio', 'ready'],
      ['weather', 'http', 'ready'],
    ]);
    expect(demo.steps.map((s) => [s.call, s.allowed, s.rule])).toEqual([
      ['mcp__notes__list_notes', true, 'notes-list'],
      ['mcp__weather__get_forecast', true, 'forecast-cities'],
      ['mcp__notes__delete_note', false, 'no-deletes'],
      ['mcp__notes__write_note', false, null],
      ['mcp__notes__write_note', true, 'notes-write-drafts'],
      ['mcp__weather__get_forecast', false, null],
      ['mcp__weather__set_alert', false, null],
    ]);
    expect(demo.steps[1]?.output).toContain('Forecast for Lisbon');
    expect(demo.steps[5]?.hint).toBe(
      `Rule 'forecast-cities' allows it only when city is one of "Berlin", "Lisbon", "Oslo".`,
    );
    expect(demo.audit.map((r) => r.effect)).toEqual([
      'allow',
      'allow',
      'deny',
      'default-deny',
      'allow',
      'default-deny',
      'default-deny',
    ]);
    expect(JSON.stringify(demo.audit)).not.toContain('gate every call');
    expect(await allGone(result.descendants)).toEqual([]);
  });

  it('in-process: stops when aborted once its servers run, and leaves no child behind', async () => {
    const controller = new AbortController();
    const running = runDemo({ signal: controller.signal });
    const started = await waitUntil(
      () => descendantPids(process.pid).length > 0 && descendantPids(process.pid),
      {
        timeoutMs: 20_000,
        intervalMs: 50,
      },
    );
    controller.abort();
    await expect(running).rejects.toBeInstanceOf(InterruptedError);
    expect(await allGone([...started, ...descendantPids(process.pid)])).toEqual([]);
  });
});
