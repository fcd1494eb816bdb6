/**
 * `interlock pins [--approve TOOL]`: the pinned tool definitions and how the live ones compare, and the
 * approval of a changed definition (which is saved to the pin file).
 */
import { UsageError } from '../exit.js';
import { type Cell, renderTable } from '../format.js';
import { visible } from '../io.js';
import { type CommandContext, Project } from '../project.js';
import { connectFor } from './shared.js';

export interface PinsOptions {
  approve?: string | undefined;
  /** The hash that was reviewed (the NOW column of `interlock pins`, 12 hex digits or more). */
  hash?: string | undefined;
}

type PinState = 'ok' | 'new' | 'changed' | 'missing';

export async function pinsCommand(ctx: CommandContext, options: PinsOptions): Promise<number> {
  const project = await Project.open(ctx, { showsPins: true });
  const { printer } = ctx;
  try {
    const before = new Set(project.pins.entries().map((e) => `${e.server}\u0000${e.tool}`));
    if (options.approve !== undefined) {
      const name = options.approve;
      const tool = await connectFor(project, name);
      const blocked = project.manager.blockedTools.find((b) => b.name === name);
      if (blocked === undefined) {
        throw new UsageError(`Tool '${name}' has no changed definition to approve; its pin is current.`);
      }
      if (options.hash === undefined) {
        throw new UsageError(
          `Approving binds the definition you reviewed: see the change with 'interlock pins' (without --approve), then run 'interlock pins --approve ${name} --hash ${blocked.currentHash.slice(0, 12)}'.`,
        );
      }
      try {
        project.manager.approveToolChange(name, options.hash);
      } catch (err) {
        throw new UsageError(
          `The definition of ${name} awaiting approval is ${blocked.currentHash.slice(0, 12)}, not ${options.hash.slice(0, 12)}: it changed since you reviewed it, or the hash is mistyped. Run 'interlock pins' and review it again.`,
          { cause: err },
        );
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
        ...(change === undefined
          ? {}
          : { diff: change.diff, previous: change.previous ?? null, current: change.current }),
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
      for (const p of pins) {
        if (p.state !== 'changed' || p.diff === undefined) continue;
        printer.line();
        printer.line(
          `${p.name ?? p.tool} changed (${p.hash.slice(0, 12)} -> ${p.currentHash?.slice(0, 12)}):`,
        );
        if (p.previous === null)
          printer.line('  (the pin file predates kept definitions: the whole new definition)');
        for (const line of p.diff) {
          const style = line.startsWith('+ ') ? 'green' : line.startsWith('- ') ? 'red' : undefined;
          printer.line(
            style === undefined ? `  ${visible(line)}` : printer.style(style, `  ${visible(line)}`),
          );
        }
        printer.line(
          `  approve what you reviewed: interlock pins --approve ${p.name ?? p.tool} --hash ${p.currentHash?.slice(0, 12)}`,
        );
      }
    }
    if (pins.some((p) => p.state === 'changed')) return 3;
    return project.failed.length > 0 ? 1 : 0;
  } finally {
    await project.close();
  }
}
