/**
 * Differential property tests for schema-bounds.ts: random `$defs` graphs, where the iterative, memoized count of
 * subschemas applied with every `$ref` inlined must equal a naive recursive inliner written plainly here, and the
 * validator must agree with a naive evaluation of the same (acyclic) graph.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { schemaBoundsProblem } from '../../src/tools/schema-bounds.js';
import { compileInputValidator } from '../../src/tools/validate.js';

/** Def i is a leaf `{ minimum: i }` or `{ allOf: [{ $ref: dj }, ...] }` with every j > i (so the graph is acyclic). */
type Graph = { refs: number[] }[];

const graphArb: fc.Arbitrary<Graph> = fc.integer({ min: 1, max: 8 }).chain((n) =>
  fc.tuple(
    ...Array.from({ length: n }, (_, i) =>
      fc.record({
        refs:
          i === n - 1
            ? fc.constant([] as number[])
            : fc.array(fc.integer({ min: i + 1, max: n - 1 }), { maxLength: 3 }),
      }),
    ),
  ),
);

function toSchema(graph: Graph): Record<string, unknown> {
  const $defs: Record<string, unknown> = {};
  graph.forEach((def, i) => {
    $defs[`d${i}`] =
      def.refs.length === 0
        ? { type: 'number', minimum: i }
        : { allOf: def.refs.map((j) => ({ $ref: `#/$defs/d${j}` })) };
  });
  return { $defs, properties: { x: { $ref: '#/$defs/d0' } } };
}

/** The naive reference: inline every $ref and count the subschemas applied. */
function naiveCount(graph: Graph): number {
  const def = (i: number): number => 1 + (graph[i]?.refs ?? []).reduce((sum, j) => sum + 1 + def(j), 0);
  // root + properties.x (a $ref node) + what it refers to
  return 1 + 1 + def(0);
}

/** The naive reference: does `value` satisfy def i? */
function naiveValid(graph: Graph, i: number, value: number): boolean {
  const refs = graph[i]?.refs ?? [];
  return refs.length === 0 ? value >= i : refs.every((j) => naiveValid(graph, j, value));
}

describe('schemaBoundsProblem on random $defs graphs', () => {
  it('counts exactly the subschemas a naive inliner applies', () => {
    fc.assert(
      fc.property(graphArb, (graph) => {
        const schema = toSchema(graph);
        const count = naiveCount(graph);
        expect(schemaBoundsProblem(schema, { maxExpandedNodes: count })).toBeUndefined();
        expect(schemaBoundsProblem(schema, { maxExpandedNodes: count - 1 })).toMatch(
          /with every \$ref inlined/,
        );
      }),
      { numRuns: 300 },
    );
  });

  it('lets the validator agree with a naive evaluation', () => {
    fc.assert(
      fc.property(graphArb, fc.integer({ min: -1, max: 9 }), (graph, value) => {
        const issues = compileInputValidator(toSchema(graph))({ x: value });
        expect(issues.length === 0).toBe(naiveValid(graph, 0, value));
      }),
      { numRuns: 200 },
    );
  });
});
