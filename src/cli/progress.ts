/**
 * Live connect progress on stderr, one server per line: on a terminal, a spinner redrawn in place; otherwise
 * plain lines as things happen (one when a server starts connecting, one when it is done).
 */
import { formatMs, oneLine } from './format.js';
import type { Printer } from './io.js';
import type { ConnectObserver, ServerOutcome } from './project.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const FRAME_MS = 80;

/** Progress for servers connecting in parallel. Call `stop()` when connecting is over. */
export class ConnectProgress implements ConnectObserver {
  readonly #printer: Printer;
  readonly #servers: { name: string; transport: string }[];
  readonly #state = new Map<string, ServerOutcome>();
  readonly #live: boolean;
  readonly #nameWidth: number;
  #frame = 0;
  #drawn = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(printer: Printer, servers: readonly { name: string; transport: string }[]) {
    this.#printer = printer;
    this.#servers = [...servers];
    this.#live = printer.stderrIsTTY;
    this.#nameWidth = Math.max(0, ...servers.map((s) => s.name.length));
    if (this.#live) {
      printer.writeErr('\u001b[?25l'); // hide the cursor while redrawing
      this.#timer = setInterval(() => {
        this.#frame = (this.#frame + 1) % FRAMES.length;
        this.#draw();
      }, FRAME_MS);
      this.#timer.unref();
    }
  }

  update(server: string, outcome: ServerOutcome): void {
    this.#state.set(server, outcome);
    if (this.#live) this.#draw();
    else if (outcome.state !== 'disabled') this.#printer.lineErr(this.#describe(server, outcome));
  }

  /** Stops redrawing and leaves the final state on screen. Safe to call twice. */
  stop(): void {
    if (this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#draw();
    this.#printer.writeErr('\u001b[?25h');
  }

  #draw(): void {
    const lines = this.#servers.map(({ name }) => {
      const outcome = this.#state.get(name);
      return outcome === undefined ? `  ${name}` : this.#describe(name, outcome);
    });
    const up = this.#drawn > 0 ? `\u001b[${this.#drawn}A` : '';
    this.#printer.writeErr(`${up}${lines.map((l) => `\r\u001b[2K${l}\n`).join('')}`);
    this.#drawn = lines.length;
  }

  #describe(name: string, outcome: ServerOutcome): string {
    const p = this.#printer;
    const transport = this.#servers.find((s) => s.name === name)?.transport ?? '';
    const label = this.#live
      ? `${name.padEnd(this.#nameWidth)}  ${transport.padEnd(5)}`
      : `${name} (${transport})`;
    switch (outcome.state) {
      case 'connecting':
        return this.#live
          ? `${p.style('cyan', FRAMES[this.#frame] ?? '-', 'err')} ${label}  connecting...`
          : `${label}: connecting`;
      case 'ready': {
        const what = `connected in ${formatMs(outcome.durationMs)}, ${outcome.tools ?? 0} tools`;
        return this.#live ? `${p.style('green', '✔', 'err')} ${label}  ${what}` : `${label}: ${what}`;
      }
      case 'failed': {
        const why = oneLine(outcome.error?.message, 100);
        const what = `failed after ${formatMs(outcome.durationMs)}: ${why}`;
        return this.#live ? `${p.style('red', '✖', 'err')} ${label}  ${what}` : `${label}: ${what}`;
      }
      case 'disabled':
        return this.#live ? `${p.style('dim', '-', 'err')} ${label}  disabled` : `${label}: disabled`;
    }
  }
}
