/** Where the benchmark's files are. */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `bench/`. */
export const BENCH_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The repository root. */
export const ROOT_DIR = resolve(BENCH_DIR, '..');
/** The bench's own node_modules, where the peers are installed (`npm ci --prefix bench`). */
export const BENCH_MODULES = join(BENCH_DIR, 'node_modules');
/** The echo servers. */
export const SERVERS_DIR = join(BENCH_DIR, 'servers');
export const ECHO_RAW = join(SERVERS_DIR, 'echo-raw.mjs');
export const ECHO_SDK = join(SERVERS_DIR, 'echo-sdk.mjs');
/** Where Interlock is compiled for the import-time figure (ignored by git). */
export const BUILD_DIR = join(BENCH_DIR, '.build');
/** Default output. */
export const RESULTS_FILE = join(BENCH_DIR, 'results', 'latest.json');
export const SVG_FILE = join(ROOT_DIR, 'docs', 'assets', 'bench-ratios.svg');
