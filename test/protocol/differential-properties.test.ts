/**
 * Issue 43, the differential test against the SDK, property-generated: answers to `tools/call` made of well-formed
 * and malformed parts alike (content blocks of every kind, of unknown kinds and of no kind, `isError` of any type,
 * `structuredContent` of any JSON value, extra keys), replayed to the SDK's `Client.callTool` and to Interlock's
 * `MCPClientManager.callTool` over one connection each, in both eras, over stdio and Streamable HTTP. What each
 * side settles with must be equal after the normalizations written in differential-harness.ts. Fixed seed, bounded
 * runs: the corpus (differential.test.ts) holds the cases chosen by hand.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERAS, type Era, openPair, type Pair, WIRES } from './differential-harness.js';

const SEED = 4343;
const RUNS = 20;

const base64 = fc.base64String({ maxLength: 12 });
const block = fc.oneof(
  fc.record({ type: fc.constant('text'), text: fc.string({ maxLength: 40 }) }),
  fc.record({ type: fc.constant('text'), text: fc.oneof(fc.integer(), fc.constant(null), fc.boolean()) }),
  fc.record(
    {
      type: fc.constantFrom('image', 'audio'),
      data: base64,
      mimeType: fc.constantFrom('image/png', 'audio/wav'),
    },
    { requiredKeys: ['type'] },
  ),
  fc.record({ type: fc.constant('resource_link'), uri: fc.webUrl(), name: fc.string({ maxLength: 10 }) }),
  fc.record({
    type: fc.constant('resource'),
    resource: fc.oneof(
      fc.record({ uri: fc.webUrl(), text: fc.string({ maxLength: 20 }) }),
      fc.record({ uri: fc.webUrl(), blob: base64 }),
      fc.jsonValue({ maxDepth: 2 }),
    ),
  }),
  fc.record({ type: fc.constantFrom('hologram', 'video', ''), data: fc.jsonValue({ maxDepth: 2 }) }),
  fc.jsonValue({ maxDepth: 2 }),
);
const jsonKey = fc.string({ maxLength: 8 }).filter((k) => k !== '__proto__');
const result = fc.record(
  {
    content: fc.oneof(
      { weight: 4, arbitrary: fc.array(block, { maxLength: 4 }) },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
    ),
    isError: fc.oneof(fc.boolean(), fc.constantFrom('true', 0, 1, null)),
    structuredContent: fc.oneof(
      fc.dictionary(jsonKey, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }),
      fc.jsonValue({ maxDepth: 2 }),
    ),
    extra: fc.jsonValue({ maxDepth: 2 }),
  },
  { requiredKeys: [] },
);

const sides = ERAS.flatMap((era) => WIRES.map((wire) => ({ era, wire })));
const complete = (era: Era) => (era === '2026-07-28' ? { resultType: 'complete' } : {});

describe.each(sides)('generated answers, $era over $wire', ({ era, wire }) => {
  let pair: Pair;
  beforeAll(async () => {
    pair = await openPair(era, wire);
  });
  afterAll(() => pair?.close());

  it('settle alike on the SDK and on Interlock', async () => {
    let values = 0;
    let errors = 0;
    await fc.assert(
      fc.asyncProperty(result, async (generated) => {
        const { sdk, ours } = await pair.run('replay', [{ result: { ...generated, ...complete(era) } }]);
        expect(ours).toEqual(sdk);
        if ('value' in sdk) values++;
        else errors++;
      }),
      { seed: SEED, numRuns: RUNS },
    );
    // Both kinds were exercised: the generator makes answers the SDK takes and answers it refuses.
    expect(values).toBeGreaterThan(0);
    expect(errors).toBeGreaterThan(0);
  });
});
