/**
 * `interlock policy`: the policy a fleet shares through Redis (`state.policy` in the project file, issue 16).
 * Without arguments it shows the shared version; `publish` makes the file's policy the next version for every
 * process; `revoke ID` removes one rule everywhere. Every process that names the same policy applies a new
 * version before its next call is sent.
 */
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { PolicyReviewError } from '../../errors.js';
import type { Policy } from '../../security/policy.js';
import { DEFAULT_POLICY_TESTS_FILE } from '../../security/policy-tests.js';
import { readRecording, replayRecording } from '../../security/replay.js';
import { HintedError, UsageError } from '../exit.js';
import { type CommandContext, Project } from '../project.js';

/** Options of `interlock policy publish`. */
export interface PublishOptions {
  /** The review hash `interlock policy diff` printed (12 hex digits or more). */
  reviewed?: string | undefined;
  /** The recording the diff was run against. @default the project file's `audit.record.file` */
  against?: string | undefined;
}

export async function policyCommand(
  ctx: CommandContext,
  action: string | undefined,
  ruleId: string | undefined,
  options: PublishOptions = {},
): Promise<number> {
  const project = await Project.open(ctx);
  const { printer } = ctx;
  try {
    const shared = project.sharedPolicy;
    if (shared === undefined) {
      throw new UsageError(
        `${project.config.file} shares no policy. Add state.redis and state.policy: { name: NAME } to share one through Redis.`,
      );
    }
    const name = project.config.state?.policy?.name as string;
    let version: number;
    if (action === undefined || action === 'status') {
      version = shared.version;
    } else if (action === 'publish') {
      if (project.config.policy === undefined) {
        throw new UsageError(`${project.config.file} has no policy to publish.`);
      }
      await checkTests(project, ctx);
      if (project.config.state?.policy?.requireReview === true) {
        await checkReview(project, project.config.policy, options, ctx.io.cwd);
      }
      version = await shared.publish(project.config.policy);
    } else if (action === 'revoke') {
      if (ruleId === undefined)
        throw new UsageError('interlock policy revoke needs the id of the rule to remove.');
      version = await shared.revoke(ruleId);
    } else {
      throw new UsageError(
        `Unknown policy action '${action}': use publish, revoke ID, or nothing for the status.`,
      );
    }
    // The shared policy's own rules (the capability set also holds the lease's fail-closed rules).
    const rules = shared.policy?.rules.length ?? 0;
    if (printer.json) printer.data({ policy: name, version, rules });
    else printer.line(`policy '${name}' is at version ${version} (${rules} rule${rules === 1 ? '' : 's'})`);
    return 0;
  } finally {
    await project.close();
  }
}

/**
 * With `state.policy.requireReview` (issue 40): the policy is published only with the review hash of its diff against
 * the recording, recomputed here. A missing, stale or wrong hash is `POLICY_NOT_REVIEWED`; the expected hash is never
 * shown (only running the diff yields it).
 */
async function checkReview(
  project: Project,
  policy: Policy,
  options: PublishOptions,
  cwd: string,
): Promise<void> {
  const name = project.config.state?.policy?.name as string;
  const hint = `run 'interlock policy diff --against RECORDING', review what flips, then 'interlock policy publish --reviewed HASH' with the review hash it printed`;
  const refuse = (reason: 'missing' | 'mismatch', message: string) => {
    const error = new PolicyReviewError(reason, message, { operatorHint: hint });
    return new HintedError(error, hint, { data: { code: error.code, reason } });
  };
  const file = options.against === undefined ? project.config.recording?.file : resolve(cwd, options.against);
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

/**
 * A policy whose tests fail is not published (issue 40): when the project has a tests file
 * (`interlock.policy-tests.yaml` beside it), every case must pass first. `POLICY_NOT_REVIEWED` with reason
 * `tests-failed` names the failing cases; nothing is written to the fleet.
 */
async function checkTests(project: Project, ctx: CommandContext): Promise<void> {
  const file = resolve(dirname(project.config.file), DEFAULT_POLICY_TESTS_FILE);
  if (!existsSync(file)) return;
  const { loadPolicyTests, runProjectPolicyTests } = await import('./policy-test.js');
  const report = await runProjectPolicyTests(project.config, await loadPolicyTests(file, file));
  if (report.failed === 0) {
    if (!ctx.printer.json) ctx.printer.line(`policy tests: ${report.passed} passed (${file})`);
    return;
  }
  const name = project.config.state?.policy?.name as string;
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
