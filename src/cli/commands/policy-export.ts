/**
 * `interlock policy export --cedar`: the project's native policy in Cedar (issue 40), on stdout, ready to be
 * reviewed and loaded with `policy: { file: policy.cedar }`. The schema it is validated against is named on
 * stderr. A rule with no Cedar form (a quota, a regular expression...) stops the export, naming the rule: nothing
 * is exported that would decide differently.
 */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { CedarPolicy } from '../../security/cedar/engine.js';
import { policyToCedar } from '../../security/cedar/export.js';
import { cedarSchemaPath } from '../../security/cedar/schema.js';
import { UsageError } from '../exit.js';
import { type CommandContext, Project } from '../project.js';

export interface PolicyExportOptions {
  /** Export as Cedar (the one format so far). */
  cedar?: boolean | undefined;
  /** Write the policy to this file instead of stdout. */
  out?: string | undefined;
}

export async function policyExportCommand(
  ctx: CommandContext,
  options: PolicyExportOptions,
): Promise<number> {
  if (options.cedar !== true) {
    throw new UsageError('interlock policy export needs a format: --cedar.');
  }
  const project = await Project.open(ctx);
  const { printer } = ctx;
  try {
    const { config } = project;
    let text: string;
    if (config.cedarPolicy !== undefined) {
      text = config.cedarPolicy; // already Cedar: exported as written
    } else if (config.policy !== undefined) {
      text = policyToCedar(config.policy);
      // What we print must load: validated against the schema as any Cedar policy is.
      new CedarPolicy(text, 'exported Cedar policy');
    } else {
      throw new UsageError(`${config.file} has no policy to export.`);
    }
    const schema = cedarSchemaPath() ?? 'schema/interlock.cedarschema (in the mcp-interlock package)';
    const out = options.out === undefined ? undefined : resolve(ctx.io.cwd, options.out);
    if (out !== undefined) await writeFile(out, text);
    if (printer.json) {
      printer.data({ format: 'cedar', schema, ...(out === undefined ? { policy: text } : { file: out }) });
    } else {
      if (out === undefined) printer.line(text.trimEnd());
      printer.lineErr(`schema: ${schema}`);
      if (out !== undefined) printer.lineErr(`wrote ${out}`);
    }
    return 0;
  } finally {
    await project.close();
  }
}
