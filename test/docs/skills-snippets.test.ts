/** The example of the Skills section (connecting-servers.md), run as a program against the skills fixture server. */
import { describe, expect, it } from 'vitest';
import * as skills from '../../docs/snippets/connecting/skills.js';
import { nodeFixture } from '../helpers/fixtures.js';

describe('skills snippet', () => {
  it('lists the skills with their resources, reads the allowed one verified, and is denied the other', async () => {
    const result = await skills.main({ name: 'docs', transport: 'stdio', ...nodeFixture('skills') });
    expect(result.skills).toEqual(
      expect.arrayContaining(['mcp:docs:skill:pdf-processing', 'mcp:docs:skill:secret-plans']),
    );
    expect(result.manifest).toMatch(/^---\nname: pdf-processing\n/);
    expect(result.forms).toContain('the signature field comes last');
    expect(result.denied).toBe('CAPABILITY_DENIED');
  });
});
