/**
 * The contenders of the benchmark (issue 8) and where their code comes from. The peers are devDependencies
 * of `bench/package.json` only; when `bench/node_modules` lacks one, its contender is skipped with the
 * reason, so the package's own test suite passes without them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_MODULES, ROOT_DIR } from './paths.js';

/** Ids of the contenders, in the order tables list them. */
export const CONTENDER_IDS = ['sdk', 'sdk2', 'interlock', 'langchain', 'mastra', 'ai-sdk'] as const;
export type ContenderId = (typeof CONTENDER_IDS)[number];

/** What the harness knows about a contender before running it. */
export interface ContenderInfo {
  id: ContenderId;
  /** Name in tables and the chart. */
  label: string;
  /** The npm package measured, whose version is reported. */
  pkg: string;
  /** `bench`: a devDependency of bench/package.json; `root`: the package itself or its own dependency. */
  from: 'root' | 'bench';
  /** What its import-time figure imports: what an app needs to connect stdio and HTTP servers. */
  importSpecifiers: string[];
}

export const CONTENDERS: Record<ContenderId, ContenderInfo> = {
  sdk: {
    id: 'sdk',
    label: 'raw SDK Client',
    pkg: '@modelcontextprotocol/sdk',
    from: 'root',
    importSpecifiers: [
      '@modelcontextprotocol/sdk/client/index.js',
      '@modelcontextprotocol/sdk/client/stdio.js',
      '@modelcontextprotocol/sdk/client/streamableHttp.js',
    ],
  },
  sdk2: {
    id: 'sdk2',
    label: 'raw SDK v2 Client',
    pkg: '@modelcontextprotocol/client',
    from: 'root',
    importSpecifiers: ['@modelcontextprotocol/client', '@modelcontextprotocol/client/stdio'],
  },
  interlock: {
    id: 'interlock',
    label: 'Interlock',
    pkg: 'mcp-interlock',
    from: 'root',
    // The entry point an app connects servers with. The package root exports only the errors (issue 43).
    importSpecifiers: ['mcp-interlock/interop'],
  },
  langchain: {
    id: 'langchain',
    label: 'LangChain MultiServerMCPClient',
    pkg: '@langchain/mcp-adapters',
    from: 'bench',
    importSpecifiers: ['@langchain/mcp-adapters'],
  },
  mastra: {
    id: 'mastra',
    label: 'Mastra MCPClient',
    pkg: '@mastra/mcp',
    from: 'bench',
    importSpecifiers: ['@mastra/mcp'],
  },
  'ai-sdk': {
    id: 'ai-sdk',
    label: 'AI SDK MCP client',
    pkg: '@ai-sdk/mcp',
    from: 'bench',
    importSpecifiers: ['@ai-sdk/mcp', '@ai-sdk/mcp/mcp-stdio'],
  },
};

/** The installed version of `pkg`, or undefined when it is not installed where the contender expects it. */
export function installedVersion(info: ContenderInfo): string | undefined {
  const file =
    info.pkg === 'mcp-interlock'
      ? join(ROOT_DIR, 'package.json')
      : join(
          info.from === 'bench' ? BENCH_MODULES : join(ROOT_DIR, 'node_modules'),
          info.pkg,
          'package.json',
        );
  if (!existsSync(file)) return undefined;
  return (JSON.parse(readFileSync(file, 'utf8')) as { version?: string }).version;
}

/** Why a contender cannot run here, or undefined when it can. */
export function unavailableReason(info: ContenderInfo): string | undefined {
  if (installedVersion(info) !== undefined) return undefined;
  return info.from === 'bench'
    ? `${info.pkg} is not installed in bench/node_modules (run: npm ci --prefix bench)`
    : `${info.pkg} is not installed (run: npm ci)`;
}

/**
 * Imports a peer from `bench/node_modules`. The specifier is not a literal, so the package's typecheck does
 * not need the peers installed; callers describe the little they use with their own types.
 */
export async function importPeer<T>(specifier: string): Promise<T> {
  const spec: string = specifier;
  return (await import(spec)) as T;
}
