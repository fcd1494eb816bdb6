/** A small logger interface; pass your own (pino, winston, console) through the manager's options. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const noop = () => {};

/** The default logger: says nothing. Events carry everything a caller may want to see. */
export const silentLogger: Logger = Object.freeze({ debug: noop, info: noop, warn: noop, error: noop });

/** A logger writing one line per message to stderr, from `level` up. */
export function consoleLogger(level: 'debug' | 'info' | 'warn' | 'error' = 'info'): Logger {
  const order = ['debug', 'info', 'warn', 'error'] as const;
  const min = order.indexOf(level);
  const make =
    (l: (typeof order)[number]) =>
    (message: string, fields?: Record<string, unknown>): void => {
      if (order.indexOf(l) < min) return;
      const extra = fields === undefined ? '' : ` ${JSON.stringify(fields)}`;
      process.stderr.write(`[interlock] ${l}: ${message}${extra}\n`);
    };
  return { debug: make('debug'), info: make('info'), warn: make('warn'), error: make('error') };
}
