/** The demo is the main job: it must run on the bundled servers, show the gate at work, and leave nothing behind. */
import { describe, expect, it } from 'vitest';
import { runDemo } from '../../examples/demo.js';
import { descendantPids } from '../helpers/processes.js';

describe('the demo', () => {
  it('allows, denies with reasons, applies argument constraints, audits every decision, and cleans up', async () => {
    const lines: string[] = [];
    const { steps, audit } = await runDemo((line) => lines.push(line));
    const verdicts = steps.map((s) => [s.call, s.allowed]);
    expect(verdicts).toEqual([
      ['mcp__notes__list_notes', true],
      ['mcp__weather__get_forecast', true],
      ['mcp__notes__delete_note', false],
      ['mcp__notes__write_note', false],
      ['mcp__notes__write_note', true],
      ['mcp__weather__get_forecast', false],
      ['mcp__weather__set_alert', false],
    ]);
    expect(steps[2]?.output).toContain('no-deletes');
    expect(steps[1]?.output).toContain('Forecast for Lisbon');
    expect(audit).toHaveLength(7);
    expect(audit.map((r) => r.effect)).toContain('deny');
    expect(JSON.stringify(audit)).not.toContain('gate every call');
    expect(lines.join('\n')).toContain('Audit trail');
    expect(descendantPids(process.pid)).toEqual([]);
  });
});
