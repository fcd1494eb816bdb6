/**
 * `interlock pins [--approve TOOL]`: the pinned tool definitions and how the live ones compare, and the
 * approval of a changed definition (which is saved to the pin file).
 */
import { UsageError } from '../exit.js';
import { type Cell, renderTable } from '../format.js';
import { type CommandContext, Project } from '../project.js';
import { connectFor } from './shared.js';

export interface PinsOptions {
  approve?: string | undefined;
}

type PinState = 'ok' | 'new' | 'changed' | 'missing';

export async function pinsCommand(ctx: CommandContext, options: PinsOptions): Promise<number> {
  const project = await Project.open(ctx);
  const { printer } = ctx;
  try {
    const before = new Set(project.pins.entries().map((e) => `${e.server}\u0000${e.tool}`));
    if (options.approve !== undefined) {
      const name = options.approve;
      const tool = await connectFor(project, name);
      const blocked = project.manager.blockedTools.find((b) => b.name === name);
      if (blocked === undefined || !project.manager.approveToolChange(name)) {
        throw new UsageError(`Tool '${name}' has no changed definition to approve; its pin is current.`);
      }
      await project.savePins();
      if (printer.json) {
        printer.data({
          approved: {
            name,
            server: tool.server,
            tool: tool.tool,
            pinnedHash: blocked.currentHash,
            previousHash: blocked.pinnedHash,
          },
          file: project.config.pinsFile,
        });
      } else {
        printer.line(
          `Approved the new definition of ${name}: pinned ${blocked.currentHash.slice(0, 12)} (was ${blocked.pinnedHash.slice(0, 12)}) in ${project.config.pinsFile}.`,
        );
      }
      return 0;
    }
    await project.connect();
    await project.savePins();
    if (!printer.json) project.warnFailed();
    const blocked = new Map(project.manager.blockedTools.map((b) => [`${b.server}\u0000${b.tool}`, b]));
    const live = new Map(project.manager.tools.map((t) => [`${t.server}\u0000${t.tool}`, t]));
    const pins = project.pins.entries().map((entry) => {
      const key = `${entry.server}\u0000${entry.tool}`;
      const change = blocked.get(key);
      const state: PinState =
        change !== undefined ? 'changed' : !live.has(key) ? 'missing' : before.has(key) ? 'ok' : 'new';
      return {
        name: live.get(key)?.name ?? null,
        server: entry.server,
        tool: entry.tool,
        state,
        hash: entry.hash,
        currentHash: change?.currentHash ?? (live.has(key) ? entry.hash : null),
      };
    });
    if (printer.json) {
      printer.data({ file: project.config.pinsFile, pins });
    } else if (pins.length === 0) {
      printer.line(`No pins in ${project.config.pinsFile}.`);
    } else {
      const style = { ok: 'green', new: 'cyan', changed: 'red', missing: 'dim' } as const;
      const rows: Cell[][] = pins.map((p) => [
        p.name ?? `${p.server}/${p.tool}`,
        { text: p.state, style: style[p.state] },
        p.hash.slice(0, 12),
        p.state === 'changed' ? `now ${p.currentHash?.slice(0, 12)}: calls blocked until approved` : '',
      ]);
      printer.line(renderTable(printer, ['TOOL', 'STATE', 'PINNED', 'NOTE'], rows));
      const changed = pins.filter((p) => p.state === 'changed');
      if (changed.length > 0) {
        printer.line();
        printer.line(
          `Review the changed definitions, then approve each with: interlock pins --approve <tool>`,
        );
      }
    }
    if (pins.some((p) => p.state === 'changed')) return 3;
    return project.failed.length > 0 ? 1 : 0;
  } finally {
    await project.close();
  }
}
