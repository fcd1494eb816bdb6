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
export const BARE_HOP = join(SERVERS_DIR, 'bare-hop.mjs');
export const TCP_RELAY = join(SERVERS_DIR, 'tcp-relay.mjs');
/**
 * Where Interlock is built as `npm run build` builds dist/, for the contender and the import figure (ignored by git).
 *
 * It lies under a `node_modules` directory on purpose. The contenders run under tsx, and tsx re-transforms every
 * JavaScript file outside `node_modules` with esbuild's `keepNames`, which adds a `__name(fn, "…")` call (an
 * `Object.defineProperty`) wherever a named function or class is created: work on every call that the published
 * package does not do, and that no peer (all installed under `node_modules`) pays. `importBuild` checks for it.
 */
export const BUILD_DIR = join(BENCH_MODULES, '.interlock-build');
/**
 * Where Interlock is built with its modules unlinked (`scripts/build.mjs --modules`), for the micro benchmarks that
 * load an internal class by its path and for profiles by source file (ignored by git; under `node_modules` for the
 * reason given at `BUILD_DIR`).
 */
export const MODULES_BUILD_DIR = join(BENCH_MODULES, '.interlock-build-modules');
/** Default output. */
export const RESULTS_FILE = join(BENCH_DIR, 'results', 'latest.json');
export const SVG_FILE = join(ROOT_DIR, 'docs', 'assets', 'bench-ratios.svg');
