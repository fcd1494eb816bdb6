#!/usr/bin/env node
// Checks the README's two commands on a fresh clone of the committed HEAD (issue 39): `npm ci` prints no npm
// warning, `npm run demo` runs, and `npm test` passes for the files that need the set-up a user does not see
// (the bench harness needs bench/'s packages, which `npm test` installs). Each step has a time bound; the last
// line is `fresh clone: ok` or `fresh clone: failed (…)`, and the exit code says the same. .ci/run runs it.
//
//   node scripts/fresh-clone.mjs [--keep]     (--keep leaves the clone for a look)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './installs.mjs';

/** The files `npm test` runs in the clone: the bench harness, and the check of what the README's commands install. */
const TEST_FILES = ['test/bench/harness.test.ts', 'test/smoke/fresh-clone.test.ts'];
const MINUTE = 60_000;

/** Runs `command` in `cwd`, echoing its output; resolves with that output, rejects on a failure or after `limitMs`. */
function step(title, command, args, cwd, limitMs) {
  process.stdout.write(`== ${title}\n`);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    for (const stream of [child.stdout, child.stderr]) {
      stream.setEncoding('utf8').on('data', (chunk) => {
        output += chunk;
        process.stdout.write(chunk);
      });
    }
    const timer = setTimeout(() => {
      process.kill(-child.pid, 'SIGKILL');
      reject(new Error(`${title} did not finish within ${limitMs / MINUTE} minutes`));
    }, limitMs);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else reject(new Error(`${title} failed (${signal ?? `exit code ${code}`})`));
    });
  });
}

const keep = process.argv.includes('--keep');
const dir = mkdtempSync(join(tmpdir(), 'interlock-fresh-clone-'));
try {
  await step('git clone', 'git', ['clone', '--quiet', ROOT, dir], ROOT, 5 * MINUTE);
  const install = await step('npm ci', 'npm', ['ci', '--no-audit', '--no-fund'], dir, 20 * MINUTE);
  const warnings = install.split('\n').filter((line) => line.startsWith('npm warn'));
  if (warnings.length > 0)
    throw new Error(`npm ci printed ${warnings.length} warning lines, the first: ${warnings[0]}`);
  await step('npm run demo', 'npm', ['run', 'demo'], dir, 5 * MINUTE);
  await step(`npm test -- ${TEST_FILES.join(' ')}`, 'npm', ['test', '--', ...TEST_FILES], dir, 30 * MINUTE);
  process.stdout.write('\nfresh clone: ok\n');
} catch (err) {
  process.stdout.write(`\nfresh clone: failed (${err.message})\n`);
  process.exitCode = 1;
} finally {
  if (keep) process.stdout.write(`the clone is in ${dir}\n`);
  else rmSync(dir, { recursive: true, force: true });
}
