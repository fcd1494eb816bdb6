/**
 * `interlock init --template NAME` (issue 42, "Policy templates for the common cases"): the information-flow
 * policies shipped in the package's `policies/templates/`, written into the new project file as its `policy`
 * section, comments and all, so the user starts from a policy that already stops the common injection attacks.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../exit.js';
import { packageRoot } from '../package-root.js';

/** The templates `init --template` knows, by name (each is `policies/templates/{name}.yaml`). */
const POLICY_TEMPLATES: readonly string[] = Object.freeze(['assistant', 'coding-agent', 'payments']);

/** The `policy:` section of a project file holding the template `name`, as lines. */
export async function templatePolicy(name: string): Promise<string[]> {
  return templatePolicyLines(name, await policyTemplateText(name));
}

/** The text of the template `name`; a name that is not one of {@link POLICY_TEMPLATES} is a usage error. */
async function policyTemplateText(name: string): Promise<string> {
  if (!POLICY_TEMPLATES.includes(name)) {
    throw new UsageError(
      `There is no policy template '${name}': choose one of ${POLICY_TEMPLATES.join(', ')}.`,
    );
  }
  const file = join(packageRoot(), 'policies', 'templates', `${name}.yaml`);
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`Cannot read the policy template ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** The project file's `policy:` section holding the template `text`: each line indented under `policy:`. */
function templatePolicyLines(name: string, text: string): string[] {
  const body = text.replace(/\n+$/, '').split('\n');
  return [
    `# The policy: the ${name} template of Interlock (policies/templates/${name}.yaml in the package), explained`,
    '# in the information-flow guide. `interlock check <tool>` shows which of its rules decides a call.',
    'policy:',
    ...body.map((line) => (line === '' ? '' : `  ${line}`)),
  ];
}
