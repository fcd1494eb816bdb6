import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = fileURLToPath(new URL('./src/', import.meta.url));

export default defineConfig({
  resolve: {
    // The package's own name resolves to its sources here, as tsconfig.json's `paths` say for tsc and tsx.
    alias: [
      { find: /^mcp-interlock$/, replacement: `${src}index.ts` },
      // The framework adapters (issue 18) live under src/adapters/.
      {
        find: /^mcp-interlock\/(ai-sdk|langchain|mastra|openai-agents)$/,
        replacement: `${src}adapters/$1/index.ts`,
      },
      { find: /^mcp-interlock\/([a-z]+)$/, replacement: `${src}$1/index.ts` },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // Real child processes and servers: give them room on a shared 2-core machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
    // A condition a test polls for may take long on a loaded machine: wait most of the test's time, not one second
    // (CONDITION_TIMEOUT_MS in test/helpers/wait.ts, issue 39).
    expect: { poll: { timeout: 20_000 } },
  },
});
