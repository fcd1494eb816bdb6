// Conditions: declarative argument constraints, and a function for sets built in code.
import assert from 'node:assert/strict';
import { CapabilitySet } from 'mcp-interlock/security';

export function main() {
  const caps = new CapabilitySet();
  caps.grant('mcp:fs:write_file', 'execute', {
    when: { args: { path: { startsWith: '/data/' }, content: { maxLength: 100_000 } } },
  });
  caps.grant('mcp:shell:run', 'execute', {
    when: { args: { command: { oneOf: ['ls', 'pwd'] } }, agent: { pattern: 'ops-[0-9]+' } },
  });

  const write = (path: unknown) => caps.has('mcp:fs:write_file', 'execute', { args: { path, content: 'x' } });
  assert.equal(write('/data/notes.txt'), true);
  assert.equal(write('/data/../etc/passwd'), false); // normalized first
  assert.equal(write('/database/x'), false); // path segments, not string prefixes
  assert.equal(write(['/data/x']), false); // wrong type: fails closed

  const run = (command: string, agent: string) =>
    caps.has('mcp:shell:run', 'execute', { args: { command }, agent });
  assert.equal(run('ls', 'ops-7'), true);
  assert.equal(run('rm', 'ops-7'), false);
  assert.equal(run('ls', 'intern'), false);

  // Tool annotations are the server's own claims: deny and ask rules only. A missing hint takes the MCP
  // default, and destructiveHint defaults to true.
  const hints = new CapabilitySet();
  hints.grant('mcp:fs:*', 'execute');
  hints.deny('mcp:fs:*', 'execute', { when: { annotations: { destructiveHint: true } } });
  assert.equal(hints.has('mcp:fs:list', 'execute', { annotations: { destructiveHint: false } }), true);
  assert.equal(hints.has('mcp:fs:rm', 'execute', { annotations: {} }), false);

  // A function condition; one that throws or returns a non-boolean fails closed.
  const hours = new CapabilitySet({ clock: () => Date.UTC(2030, 0, 1, 10) });
  hours.grant('mcp:deploy:*', 'execute', { when: ({ now }) => new Date(now).getUTCHours() < 17 });
  hours.grant('mcp:flaky:*', 'execute', {
    when: () => {
      throw new Error('bug');
    },
  });
  assert.equal(hours.has('mcp:deploy:release', 'execute'), true);
  assert.equal(hours.has('mcp:flaky:x', 'execute'), false);
  return caps.check('mcp:fs:write_file', 'execute', { args: { path: '/etc/passwd', content: '' } });
}
