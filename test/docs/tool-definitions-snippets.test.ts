/** The examples of the tool-definition sections (connecting-servers.md and security.md), run as programs. */
import { describe, expect, it } from 'vitest';
import * as toolDefinitions from '../../docs/snippets/connecting/tool-definitions.js';
import * as validationOrder from '../../docs/snippets/connecting/validation-order.js';

describe('tool definition snippets', () => {
  it('tool-definitions: title, annotations and outputSchema carried; structuredContent checked; links kept', async () => {
    const result = await toolDefinitions.main();
    expect(result).toMatchObject({
      title: 'Get Structured Content Tool',
      readOnly: true,
      outputRequired: ['temperature', 'conditions', 'humidity'],
      icons: [],
      structured: { temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 },
      linkTypes: ['text', 'resource_link'],
    });
    expect(result.linkText).toMatch(
      /^\[resource link: Blob Resource 1, demo:\/\/resource\/dynamic\/blob\/1, text\/plain\]/,
    );
  });

  it('validation-order: schema error, explained denial, allowed read, explicit deny first', async () => {
    const result = await validationOrder.main();
    expect(result.misspelt).toMatch(/^INVALID_TOOL_INPUT: .*\/path: is required/);
    expect(result.relative).toMatch(
      /^CAPABILITY_DENIED: .*Rule 'notes-only' allows 'execute' on 'mcp:fs:read_text_file' only when path starts with ".*"; for this call argument 'path' is a relative path/,
    );
    expect(result.relative).not.toContain('grant(');
    expect(result.allowed).toBe('hello');
    expect(result.denied).toMatch(/^CAPABILITY_DENIED: .*Denied by rule 'read-only'/);
  });
});
