#!/usr/bin/env node
// Runs the vitest suite and ends with the plain line CI reads: `tests: N passed, M failed[, K skipped]`.
// Extra arguments go to vitest (e.g. a file filter). Exit code is vitest's.
// First it installs bench/'s packages when they are missing or stale (scripts/installs.mjs): the README's
// `npm ci`, then `npm test`, is all a fresh clone needs.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureInstalled } from './installs.mjs';

try {
  ensureInstalled('bench');
} catch (err) {
  // Offline without the packages in npm's cache, say: the rest of the suite still runs, and the bench tests fail
  // with what is missing.
  process.stderr.write(`${err.message}\n`);
}

const require = createRequire(import.meta.url);
const vitest = join(require.resolve('vitest/package.json'), '..', 'vitest.mjs');
const dir = mkdtempSync(join(tmpdir(), 'interlock-test-'));
const report = join(dir, 'report.json');
const run = spawnSync(
  process.execPath,
  [
    vitest,
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${report}`,
    ...process.argv.slice(2),
  ],
  { stdio: 'inherit' },
);
let passed = 0;
let failed = 0;
let skipped = 0;
try {
  const json = JSON.parse(readFileSync(report, 'utf8'));
  passed = json.numPassedTests;
  failed = json.numFailedTests;
  skipped = json.numPendingTests + (json.numTodoTests ?? 0);
  // A file that failed to load has no tests but is a failure.
  for (const file of json.testResults ?? []) {
    if (file.status === 'failed' && (file.assertionResults ?? []).length === 0) failed += 1;
  }
} catch {
  failed = Math.max(failed, 1);
}
rmSync(dir, { recursive: true, force: true });
const status = run.status ?? 1;
if (status !== 0 && failed === 0) failed = 1;
process.stdout.write(
  `\ntests: ${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}\n`,
);
process.exit(status);
