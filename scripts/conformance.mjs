#!/usr/bin/env node
// Runs the official MCP conformance suite's client scenarios against test/conformance/client.ts (issue 13).
// The suite lives in conformance/ with its own lockfile (it needs Node 22; the package supports Node 20): this
// script installs it there when it is missing or stale (scripts/installs.mjs). Run it with Node 22 or later.
//
//   node scripts/conformance.mjs [--scenario NAME]... [--release stable|next]...
//
// Two releases of the suite run: `stable` (the npm `latest`, every client scenario at its default revision) and
// `next` (the pre-release that has the 2026-07-28 scenarios, each run at 2026-07-28, plus the extension scenarios).
// Each scenario is one test. The last line is `conformance: N passed, M failed`; the exit code is 1 on a failure.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureInstalled } from './installs.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLIENT = `${JSON.stringify(process.execPath)} --import tsx test/conformance/client.ts`;
/** Per scenario: the suite's own default is 30 s; a loaded CI machine gets more. */
const SCENARIO_TIMEOUT_MS = 60_000;

/**
 * The suite releases. `stable` runs every client scenario it lists, at the revision the suite picks for it. `next`
 * (the pre-release) runs what `stable` does not cover: every scenario of revision 2026-07-28 (at 2026-07-28), the
 * extension scenarios, scenarios `stable` lacks, and those `stable` skips because its own fixture is broken.
 */
const RELEASES = {
  stable: { bin: 'conformance-stable', select: () => ({ run: true, specVersion: undefined }) },
  next: {
    bin: 'conformance-next',
    select: (versions, name, covered) =>
      versions.includes('2026-07-28')
        ? { run: true, specVersion: '2026-07-28' }
        : versions.includes('extension') || !covered.has(name)
          ? { run: true, specVersion: undefined }
          : { run: false },
  },
};

/**
 * Scenarios of a release that are not run, each with the reason; the other release runs them where it can. A
 * skipped scenario is reported and counted as skipped, never as passed.
 * @type {Record<string, string>}
 */
const SKIPPED = {
  'stable auth/2025-03-26-oauth-metadata-backcompat':
    "the 0.1.16 fixture publishes an issuer that contradicts RFC 8414 3.3 (fixed upstream in conformance#359); 'next' runs it",
};

/**
 * Scenarios known to fail, each with the reason. They run; a failure is counted as skipped (not passed), and a
 * pass is counted as passed with a notice to drop the entry.
 * @type {Record<string, string>}
 */
const EXPECTED_FAILURES = {};

/*
 * Decided from the spec's text (issue 43), so that no scenario passes by accident:
 *
 * - `next sep-2322-client-request-state` passes: MCP draft, basic/index, "For backward compatibility with servers
 *   implementing earlier protocol versions, which do not include `resultType`, clients MUST treat an absent
 *   `resultType` as "complete"." The SDK 2.4 client refuses such a result; Interlock's transport hook fills the field
 *   in before the SDK reads the answer (checkInboundResults, src/interop/transport.ts).
 * - `next http-custom-headers` passes, and the conformance client (test/conformance/client.ts) leaves out the
 *   optional arguments the scenario sets to `null` (`verbose: null`, declared `{ "type": "boolean" }`). Interlock
 *   checks arguments against the tool's inputSchema before sending and refuses a `null` where the schema wants a
 *   boolean: JSON Schema says null is no boolean, and the argument check fails closed. SEP-2243 (draft,
 *   transports/streamable-http, "Custom Headers") treats the two alike on the wire: "Parameter value is `null`:
 *   Client MUST omit the header" and "Parameter not in arguments: Client MUST omit the header", so leaving the
 *   property out is what the scenario checks (`sep-2243-client-omit-null`). Documented in
 *   docs/guides/reliability.md ("Checked against the SDK").
 */

function parseArgs(argv) {
  const scenarios = [];
  const releases = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--scenario') scenarios.push(argv[++i]);
    else if (argv[i] === '--release') releases.push(argv[++i]);
    else throw new Error(`unknown argument ${argv[i]}; use --scenario NAME or --release stable|next`);
  }
  return { scenarios, releases: releases.length > 0 ? releases : Object.keys(RELEASES) };
}

function run(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], ...options });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, out }));
  });
}

function binOf(release) {
  return join(root, 'conformance', 'node_modules', RELEASES[release].bin, 'dist', 'index.js');
}

/** The client scenarios a release lists, with the revisions each applies to. */
async function listScenarios(release) {
  const { code, out } = await run(process.execPath, [binOf(release), 'list', '--client']);
  if (code !== 0) throw new Error(`conformance ${release}: 'list --client' failed:\n${out}`);
  return [...out.matchAll(/^\s+- (\S+) \[([^\]]*)\]/gm)].map((m) => ({
    name: m[1],
    versions: m[2].split(','),
  }));
}

/**
 * Scenarios that pass with every check skipped when the client does nothing (issue 42): the Skills extension's
 * client scenarios skip their checks unless the client lists skills. A skipped check fails them here, so they pass
 * only when their checks ran.
 */
const NO_SKIPPED_CHECKS = /^sep-2640-client-/;

/**
 * The failed checks of a scenario run, from the checks.json the suite wrote; for a scenario that must run its
 * checks, the skipped ones too.
 */
async function failedChecks(dir, name) {
  try {
    const [entry] = await readdir(dir);
    if (entry === undefined) return [];
    const checks = JSON.parse(await readFile(join(dir, entry, 'checks.json'), 'utf8'));
    const mustRun = NO_SKIPPED_CHECKS.test(name);
    return checks
      .filter((c) => c.status === 'FAILURE' || (mustRun && c.status === 'SKIPPED'))
      .map((c) => `${c.id}: ${c.status === 'SKIPPED' ? 'skipped: ' : ''}${c.errorMessage ?? c.description}`);
  } catch {
    return [];
  }
}

async function runScenario(release, name, specVersion) {
  const dir = await mkdtemp(join(tmpdir(), 'interlock-conformance-'));
  try {
    const args = [binOf(release), 'client', '--command', CLIENT, '--scenario', name, '--timeout'];
    args.push(String(SCENARIO_TIMEOUT_MS), '-o', dir);
    if (specVersion !== undefined) args.push('--spec-version', specVersion);
    const { code, out } = await run(process.execPath, args);
    const failures = await failedChecks(dir, name);
    const passed = code === 0 && failures.length === 0 && /OVERALL: PASSED/.test(out);
    return { passed, failures, out };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main() {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 22) throw new Error(`the conformance suite needs Node 22 or later; this is ${process.version}`);
  ensureInstalled('conformance');
  const { scenarios: only, releases } = parseArgs(process.argv.slice(2));
  const count = { passed: 0, failed: 0, skipped: 0 };
  // What `stable` runs, so `next` runs only the rest.
  const covered = new Set(
    (await listScenarios('stable'))
      .map((s) => s.name)
      .filter((name) => SKIPPED[`stable ${name}`] === undefined),
  );
  for (const release of releases) {
    if (RELEASES[release] === undefined) throw new Error(`unknown release '${release}'`);
    for (const { name, versions } of await listScenarios(release)) {
      if (only.length > 0 && !only.includes(name)) continue;
      const choice = RELEASES[release].select(versions, name, covered);
      if (!choice.run) continue;
      const key = `${release} ${name}`;
      const label = `${key}${choice.specVersion === undefined ? '' : ` @${choice.specVersion}`}`;
      if (SKIPPED[key] !== undefined) {
        count.skipped++;
        console.log(`skip  ${label} (${SKIPPED[key]})`);
        continue;
      }
      const result = await runScenario(release, name, choice.specVersion);
      const expected = EXPECTED_FAILURES[key];
      if (result.passed) {
        count.passed++;
        console.log(
          `pass  ${label}${expected === undefined ? '' : ' (expected to fail: drop it from EXPECTED_FAILURES)'}`,
        );
      } else if (expected !== undefined) {
        count.skipped++;
        console.log(`xfail ${label} (${expected})`);
      } else {
        count.failed++;
        console.log(`FAIL  ${label}`);
        for (const f of result.failures) console.log(`        ${f}`);
        if (result.failures.length === 0 || process.env.CONFORMANCE_VERBOSE)
          console.log(result.out.replace(/^/gm, '        | '));
      }
    }
  }
  let summary = `conformance: ${count.passed} passed, ${count.failed} failed`;
  if (count.skipped > 0) summary += `, ${count.skipped} skipped`;
  console.log(summary);
  process.exitCode = count.failed > 0 ? 1 : 0;
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
});
