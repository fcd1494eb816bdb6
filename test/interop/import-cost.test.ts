import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { describe, expect, it } from 'vitest';
import { defaultStdioEnvironment } from '../../src/protocol/transport.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Every module a fresh process loads while importing `entry` (ESM through a loader hook, CommonJS through
 * require.cache), as paths relative to the repository.
 */
async function modulesLoadedBy(entry: string): Promise<string[]> {
  // The hook runs on the loader thread: its console output reaches stdout asynchronously and can be lost when the
  // process exits first (seen once on Node 22 under load), so it writes each line to fd 1 itself, synchronously.
  const hook = `data:text/javascript,${encodeURIComponent(
    'import { writeSync } from "node:fs"; export async function load(url, context, next) { writeSync(1, "LOADED " + url + "\\n"); return next(url, context); }',
  )}`;
  const code = [
    "import { register, createRequire } from 'node:module';",
    `register(${JSON.stringify(hook)});`,
    `await import(${JSON.stringify(join(root, entry))});`,
    'for (const f of Object.keys(createRequire(import.meta.url).cache)) console.log("LOADED " + f);',
  ].join('\n');
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', code],
    { cwd: root },
  );
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('LOADED '))
    .map((l) =>
      l
        .slice('LOADED '.length)
        .replace(/^file:\/\//, '')
        .replace(`${root}/`, ''),
    );
}

describe('what importing mcp-interlock/interop loads (issue 15, import time)', () => {
  it('loads neither the engine, session, providers nor inversify, and leaves HTTP, validation and telemetry for later', async () => {
    const loaded = await modulesLoadedBy('src/interop/index.ts');
    expect(loaded.some((f) => f.startsWith('src/interop/manager.ts'))).toBe(true);
    const packageOf = (f: string) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f)?.[1];
    const packages = new Set(loaded.map(packageOf).filter((p) => p !== undefined));
    // What the interop entry does need is seen (the listing works).
    expect(packages.has('@modelcontextprotocol/client')).toBe(true);
    expect(packages.has('zod')).toBe(true);
    for (const late of [
      'inversify',
      'undici',
      'ajv',
      'ajv-formats',
      're2js',
      'ipaddr.js',
      '@opentelemetry/api',
      'signal-exit',
      'cross-spawn',
    ]) {
      expect(packages.has(late), `${late} is loaded at import`).toBe(false);
    }
    const areas = loaded.filter((f) => /^src\/(engine|session|providers|cli|gateway|adapters)\//.test(f));
    expect(areas).toEqual([]);
  });
});

/**
 * Runs `code` in a fresh process (ESM, through tsx) after the SDK client is loaded, counting the zod schemas built
 * from then on: zod gives every schema and check its `_zod` internals with `Object.defineProperty`. Prints the
 * JSON the code passes to `report(value)`, with `built()` the count so far.
 */
async function afterSdkClient(code: string): Promise<Record<string, number>> {
  const script = [
    'const define = Object.defineProperty; let count = 0;',
    "Object.defineProperty = function (o, p, d) { if (p === '_zod') count++; return define.call(this, o, p, d); };",
    "await import('@modelcontextprotocol/client');",
    "const { z } = await import('zod');",
    'const built = () => count;',
    'const report = (value) => process.stdout.write(JSON.stringify(value));',
    code,
  ].join('\n');
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', script],
    { cwd: root },
  );
  return JSON.parse(stdout) as Record<string, number>;
}

describe('what importing mcp-interlock/interop builds and loads later (issue 15, import time)', () => {
  it('leaves the connection stack, the tool-call path and the resource path for the first manager, connect or call', async () => {
    const loaded = await modulesLoadedBy('src/interop/index.ts');
    for (const late of [
      'src/interop/connection.ts',
      'src/protocol/transport.ts',
      'src/interop/sdk-errors.ts',
      'src/interop/request-errors.ts',
      'src/protocol/task-handles.ts',
      'src/interop/call-path.ts',
      'src/interop/tasks.ts',
      'src/protocol/input-rounds.ts',
      'src/interop/request-path.ts',
      // Node's TLS and DNS modules: loaded by the first client with extra CAs and the first lookup.
      'node:tls',
      'node:dns',
    ]) {
      expect(loaded, `${late} is loaded at import`).not.toContain(late);
    }
  });

  it('builds no zod schema at import: server configs, policies and tool schemas are built at first use', async () => {
    const counts = await afterSdkClient(
      [
        'let before = built(); z.object({ a: z.string() }); const probe = built() - before;',
        "before = built(); const interop = await import('./src/interop/index.ts'); const atImport = built() - before;",
        'before = built(); const variants = interop.MCPServerConfigSchema.options.length; const onUse = built() - before;',
        // The policy module, not the security entry: that one exports the public PolicySchema, built as it loads.
        "const policyModule = await import('./src/security/policy.ts');",
        'before = built(); policyModule.parsePolicy({ version: 1, rules: [] }); const policy = built() - before;',
        "const tools = await import('./src/tools/index.ts');",
        "before = built(); tools.parseToolSchemas('s', [{ name: 't', inputSchema: {} }]); const toolSchemas = built() - before;",
        'report({ probe, atImport, onUse, variants, policy, toolSchemas });',
      ].join('\n'),
    );
    // The probe sees schemas being built, so a zero below means none were.
    expect(counts.probe).toBeGreaterThan(0);
    expect(counts.variants).toBe(4);
    expect(counts.atImport).toBe(0);
    // Each is built when first used (the server configs are some 400 schemas).
    expect(counts.onUse).toBeGreaterThan(300);
    expect(counts.policy).toBeGreaterThan(50);
    expect(counts.toolSchemas).toBeGreaterThan(20);
  });
});

describe('the default environment of stdio servers', () => {
  it("is the SDK's getDefaultEnvironment, without loading the SDK's stdio module", () => {
    expect(defaultStdioEnvironment()).toEqual(getDefaultEnvironment());
  });
});
