/** `interlock demo`: the bundled servers, the sample policy and a scripted agent; see `demo/run.ts`. */
import { printDemo, runDemo } from '../demo/run.js';
import type { CommandContext } from '../project.js';

export async function demoCommand(ctx: CommandContext): Promise<number> {
  const result = await runDemo({ signal: ctx.io.signal });
  if (ctx.printer.json) ctx.printer.data(result);
  else printDemo(ctx.printer, result);
  return 0;
}
