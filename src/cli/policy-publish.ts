/**
 * The checks a policy passes before it is published to the fleet (issue 40), shared by `interlock policy publish`
 * and the operator console's publish button (issue 41, through the publisher `interlock serve` gives the gateway):
 * the project's policy tests must pass, and with `state.policy.requireReview` the review hash of the policy's diff
 * against the recording must be the one given.
 */
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { InterlockConfig } from '../config/load.js';
import { PolicyReviewError } from '../errors.js';
import type { Policy } from '../security/policy.js';
import { DEFAULT_POLICY_TESTS_FILE, type PolicyTestReport } from '../security/policy-tests.js';
import { readRecording, replayRecording } from '../security/replay.js';
import { HintedError, UsageError } from './exit.js';

/** The project's policy tests and their result, when it has a tests file beside the project file. */
export interface ProjectTestsRun {
  readonly file: string;
  readonly report: PolicyTestReport;
}

/** Runs the tests file beside the project file (`interlock.policy-tests.yaml`) against its policy, if there is one. */
export async function runPublishTests(config: InterlockConfig): Promise<ProjectTestsRun | undefined> {
  const file = resolve(dirname(config.file), DEFAULT_POLICY_TESTS_FILE);
  if (!existsSync(file)) return undefined;
  const { loadPolicyTests, runProjectPolicyTests } = await import('./commands/policy-test.js');
  return { file, report: await runProjectPolicyTests(config, await loadPolicyTests(file, file)) };
}

/**
 * A policy whose tests fail is not published: `POLICY_NOT_REVIEWED` with reason `tests-failed` names the failing
 * cases; nothing is written to the fleet.
 */
export function refuseFailedTests(config: InterlockConfig, run: ProjectTestsRun): void {
  const { file, report } = run;
  if (report.failed === 0) return;
  const name = config.state?.policy?.name as string;
  const failed = report.results.filter((r) => !r.passed).map((r) => `'${r.name}'`);
  const hint = `run 'interlock policy test' to see each failure, fix the policy or the cases, then publish again`;
  const error = new PolicyReviewError(
    'tests-failed',
    `Policy '${name}' was not published: ${report.failed} of ${report.results.length} policy tests in ${file} failed (${failed.slice(0, 5).join(', ')}${failed.length > 5 ? ', ...' : ''}).`,
    { operatorHint: hint },
  );
  throw new HintedError(error, hint, {
    data: { code: error.code, reason: 'tests-failed', failed: report.failed },
  });
}

/**
 * With `state.policy.requireReview`: the policy is published only with the review hash of its diff against the
 * recording (`against`, else the project's `audit.record.file`), recomputed here. A missing, stale or wrong hash is
 * `POLICY_NOT_REVIEWED`; the expected hash is never shown (only running the diff yields it).
 */
export async function checkReview(
  config: InterlockConfig,
  policy: Policy,
  options: { reviewed?: string | undefined; against?: string | undefined },
  cwd: string,
): Promise<void> {
  const name = config.state?.policy?.name as string;
  const hint = `run 'interlock policy diff --against RECORDING', review what flips, then 'interlock policy publish --reviewed HASH' with the review hash it printed`;
  const refuse = (reason: 'missing' | 'mismatch', message: string) => {
    const error = new PolicyReviewError(reason, message, { operatorHint: hint });
    return new HintedError(error, hint, { data: { code: error.code, reason } });
  };
  const file = options.against === undefined ? config.recording?.file : resolve(cwd, options.against);
  if (options.reviewed === undefined || file === undefined) {
    throw refuse(
      'missing',
      `Policy '${name}' was not published: publishing requires a reviewed diff (state.policy.requireReview), and ${options.reviewed === undefined ? 'no --reviewed HASH was given' : 'no recording was named (--against FILE, or audit.record.file)'}.`,
    );
  }
  if (!/^[0-9a-f]{12,64}$/i.test(options.reviewed)) {
    throw new UsageError(
      `--reviewed takes the review hash 'interlock policy diff' printed: 12 to 64 hex digits.`,
    );
  }
  const report = replayRecording(await readRecording(file), policy);
  if (!report.reviewHash.startsWith(options.reviewed.toLowerCase())) {
    throw refuse(
      'mismatch',
      `Policy '${name}' was not published: ${options.reviewed} is not the review hash of this policy's diff against ${file}. The policy or the recording changed since the diff was reviewed, or the hash is mistyped.`,
    );
  }
}
