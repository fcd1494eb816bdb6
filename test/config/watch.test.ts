/** Hot reload of a policy file (issue 16): each valid change reaches the set; an invalid one keeps the last. */
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { watchPolicyFile } from '../../src/config/watch.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { waitUntil } from '../helpers/wait.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const yaml = (tool: string) =>
  `version: 1\nrules:\n  - id: one\n    effect: allow\n    resource: mcp:fs:${tool}\n    actions: execute\n`;

describe('watchPolicyFile', () => {
  it('applies each valid change, reports an invalid one and keeps the last good policy', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'interlock-watch-'));
    dirs.push(dir);
    const file = join(dir, 'policy.yaml');
    writeFileSync(file, yaml('read_file'));
    const caps = new CapabilitySet();
    const errors: unknown[] = [];
    await using watch = await watchPolicyFile(file, {
      onPolicy: (p) => caps.replaceRules(p),
      onError: (e) => errors.push(e),
    });
    expect(watch.initial.rules[0]?.resource).toBe('mcp:fs:read_file');
    writeFileSync(file, yaml('write_file'));
    await waitUntil(() => caps.has('mcp:fs:write_file', 'execute'));
    expect(caps.has('mcp:fs:read_file', 'execute')).toBe(false);

    writeFileSync(
      file,
      'version: 1\nrules:\n  - effect: allow\n    resource: mcp:fs:x\n    actoins: execute\n',
    );
    await waitUntil(() => errors.length > 0);
    expect(errors[0]).toMatchObject({ code: 'INVALID_CONFIG' });
    expect(caps.has('mcp:fs:write_file', 'execute')).toBe(true);

    // Editors that write a new file and rename it over the old one are followed too.
    writeFileSync(join(dir, 'policy.yaml.tmp'), yaml('list_directory'));
    renameSync(join(dir, 'policy.yaml.tmp'), file);
    await waitUntil(() => caps.has('mcp:fs:list_directory', 'execute'));
  });
});
