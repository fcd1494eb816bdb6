/**
 * `interlock policy`: the policy a fleet shares through Redis (`state.policy` in the project file, issue 16).
 * Without arguments it shows the shared version; `publish` makes the file's policy the next version for every
 * process; `revoke ID` removes one rule everywhere. Every process that names the same policy applies a new
 * version before its next call is sent.
 */
import { UsageError } from '../exit.js';
import { checkReview, refuseFailedTests, runPublishTests } from '../policy-publish.js';
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
        await checkReview(project.config, project.config.policy, options, ctx.io.cwd);
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

/** The policy tests must pass first (issue 40): their count is printed, a failure refuses the publish. */
async function checkTests(project: Project, ctx: CommandContext): Promise<void> {
  const run = await runPublishTests(project.config);
  if (run === undefined) return;
  refuseFailedTests(project.config, run);
  if (!ctx.printer.json) ctx.printer.line(`policy tests: ${run.report.passed} passed (${run.file})`);
}
