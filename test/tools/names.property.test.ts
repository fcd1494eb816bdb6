import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isValidServerName,
  MAX_TOOL_NAME_LENGTH_LIMIT,
  MIN_TOOL_NAME_LENGTH,
  makeToolName,
  parseToolName,
  ToolNameRegistry,
} from '../../src/tools/names.js';

const RUNS = { numRuns: 1000 };
const SAFE = /^[A-Za-z0-9_-]+$/;

/** Valid server names: 1-40 of [A-Za-z0-9_-], no `__`, no leading or trailing `_`. */
const serverArb = fc
  .stringMatching(/^[A-Za-z0-9-](?:[A-Za-z0-9_-]{0,38}[A-Za-z0-9-])?$/)
  .filter((s) => !s.includes('__'));

/** Tool names as servers send them: clean, clean but long, arbitrary Unicode, lookalikes of hashed names. */
const toolArb = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_-]{1,30}$/),
  fc.stringMatching(/^[A-Za-z0-9_-]{50,150}$/),
  fc.string({ unit: 'grapheme', maxLength: 80 }),
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.constantFrom('a.b', 'a_b', 'a b', '_', '__', 'x__y', '', 'read_file'),
);

const maxLengthArb = fc.integer({ min: MIN_TOOL_NAME_LENGTH, max: MAX_TOOL_NAME_LENGTH_LIMIT });

const pairsArb = fc.array(fc.tuple(fc.constantFrom('fs', 'web', 'a-b'), toolArb), { maxLength: 25 });

describe('tool name properties', () => {
  it('produces names of [A-Za-z0-9_-] within maxLength that parse back to their server', () => {
    fc.assert(
      fc.property(serverArb, toolArb, maxLengthArb, (server, tool, maxLength) => {
        expect(isValidServerName(server)).toBe(true);
        const name = makeToolName(server, tool, { maxLength });
        expect(name).toMatch(SAFE);
        expect(name.length).toBeLessThanOrEqual(maxLength);
        expect(parseToolName(name)?.server).toBe(server);
        expect(makeToolName(server, tool, { maxLength })).toBe(name);
      }),
      RUNS,
    );
  });

  it('keeps every clean name that fits exactly as it is', () => {
    fc.assert(
      fc.property(serverArb, fc.stringMatching(/^[A-Za-z0-9_-]{1,60}$/), (server, tool) => {
        const plain = `mcp__${server}__${tool}`;
        const name = makeToolName(server, tool, { maxLength: 128 });
        if (plain.length <= 128) {
          expect(name).toBe(plain);
          expect(parseToolName(name)).toEqual({ server, tool });
        }
      }),
      RUNS,
    );
  });

  it('maps every name the registry produces back to exactly its own tool, like a naive map', () => {
    fc.assert(
      fc.property(pairsArb, maxLengthArb, (pairs, maxLength) => {
        const registry = new ToolNameRegistry({ maxLength });
        // Naive reference: a list of (server, tool, name), checked by linear search.
        const reference: { server: string; tool: string; name: string }[] = [];
        for (const [server, tool] of pairs) {
          const { name } = registry.register(server, tool);
          const known = reference.find((r) => r.server === server && r.tool === tool);
          if (known) expect(name).toBe(known.name);
          else reference.push({ server, tool, name });
        }
        expect(new Set(reference.map((r) => r.name)).size).toBe(reference.length);
        expect(registry.names().sort()).toEqual(reference.map((r) => r.name).sort());
        for (const r of reference) {
          expect(r.name).toMatch(SAFE);
          expect(r.name.length).toBeLessThanOrEqual(maxLength);
          expect(registry.resolve(r.name)).toEqual({ server: r.server, tool: r.tool });
          expect(registry.nameOf(r.server, r.tool)).toBe(r.name);
          expect(registry.register(r.server, r.tool)).toEqual({ name: r.name });
        }
      }),
      RUNS,
    );
  });

  it('resolves nothing for names it did not produce', () => {
    fc.assert(
      fc.property(
        pairsArb,
        fc.oneof(
          fc.string({ maxLength: 80 }),
          fc.stringMatching(/^mcp__[a-z]{1,4}__[A-Za-z0-9_-]{1,20}$/),
          fc.tuple(serverArb, toolArb).map(([s, t]) => makeToolName(s, t)),
        ),
        (pairs, probe) => {
          const registry = new ToolNameRegistry();
          const produced = new Set(pairs.map(([server, tool]) => registry.register(server, tool).name));
          if (!produced.has(probe)) expect(registry.resolve(probe)).toBeUndefined();
        },
      ),
      RUNS,
    );
  });

  it('forgets exactly the removed tools and keeps the others resolvable', () => {
    fc.assert(
      fc.property(pairsArb, fc.constantFrom('fs', 'web', 'a-b'), (pairs, removed) => {
        const registry = new ToolNameRegistry();
        const names = pairs.map(([server, tool]) => ({
          server,
          tool,
          name: registry.register(server, tool).name,
        }));
        registry.removeServer(removed);
        for (const { server, tool, name } of names) {
          if (server === removed) expect(registry.resolve(name)).toBeUndefined();
          else expect(registry.resolve(name)).toEqual({ server, tool });
        }
      }),
      RUNS,
    );
  });

  it('parses only names of the form mcp__{valid server}__{non-empty tool}', () => {
    const nameArb = fc.oneof(
      fc.string({ maxLength: 60 }),
      fc.stringMatching(/^mcp_{1,3}[A-Za-z0-9_-]{0,10}_{1,3}[A-Za-z0-9_. -]{0,10}$/),
    );
    fc.assert(
      fc.property(nameArb, (name) => {
        // Naive reference: every way to split the name into a valid server and a non-empty tool part.
        const splits: { server: string; tool: string }[] = [];
        if (name.startsWith('mcp__')) {
          for (let i = 5; i < name.length; i++) {
            const server = name.slice(5, i);
            const tool = name.slice(i + 2);
            if (name.startsWith('__', i) && isValidServerName(server) && SAFE.test(tool)) {
              splits.push({ server, tool });
            }
          }
        }
        // At most one split is valid: the format is unambiguous.
        expect(splits.length).toBeLessThanOrEqual(1);
        expect(parseToolName(name)).toEqual(splits[0] ?? null);
      }),
      RUNS,
    );
  });
});
