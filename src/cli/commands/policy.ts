/**
 * `interlock policy`: the policy a fleet shares through Redis (`state.policy` in the project file, issue 16).
 * Without arguments it shows the shared version; `publish` makes the file's policy the next version for every
 * process; `revoke ID` removes one rule everywhere. Every process that names the same policy applies a new
 * version before its next call is sent.
 */
import { UsageError } from '../exit.js';
import { type CommandContext, Project } from '../project.js';

export async function policyCommand(
  ctx: CommandContext,
  action: string | undefined,
  ruleId: string | undefined,
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
