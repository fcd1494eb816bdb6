/** `interlock resources [read URI]` and `interlock prompts [get NAME]`: which of each command's forms runs. */
import { UsageError } from '../exit.js';
import type { CommandContext } from '../project.js';
import type { ArgsOptions } from './shared.js';

export async function resourcesMain(
  ctx: CommandContext,
  action: string | undefined,
  uri: string | undefined,
  options: { server?: string | undefined },
): Promise<number> {
  const { readResourceCommand, resourcesCommand } = await import('./resources.js');
  if (action === undefined || action === 'list') {
    if (uri !== undefined)
      throw new UsageError(`'interlock resources' lists; to read '${uri}': interlock resources read ${uri}`);
    return resourcesCommand(ctx, options);
  }
  if (action !== 'read') {
    throw new UsageError(
      `Unknown action '${action}': 'interlock resources' lists, 'interlock resources read URI' reads.`,
    );
  }
  if (uri === undefined) throw new UsageError('Name the resource to read: interlock resources read URI');
  return readResourceCommand(ctx, uri, options);
}

export async function promptsMain(
  ctx: CommandContext,
  action: string | undefined,
  name: string | undefined,
  options: { server?: string | undefined } & ArgsOptions,
): Promise<number> {
  const { getPromptCommand, promptsCommand } = await import('./prompts.js');
  if (action === undefined || action === 'list') {
    if (name !== undefined)
      throw new UsageError(`'interlock prompts' lists; to get '${name}': interlock prompts get ${name}`);
    return promptsCommand(ctx, options);
  }
  if (action !== 'get') {
    throw new UsageError(
      `Unknown action '${action}': 'interlock prompts' lists, 'interlock prompts get NAME' gets one.`,
    );
  }
  if (name === undefined) throw new UsageError('Name the prompt to get: interlock prompts get NAME');
  return getPromptCommand(ctx, name, options);
}
