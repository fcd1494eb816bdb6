import { describe, expect, it } from 'vitest';
import { ConfigError, isInterlockError } from '../../src/errors.js';
import {
  DEFAULT_MAX_TOOL_NAME_LENGTH,
  isValidServerName,
  MAX_TOOL_NAME_LENGTH_LIMIT,
  MIN_TOOL_NAME_LENGTH,
  makeToolName,
  parseToolName,
  ToolNameRegistry,
  unsafeToolNameReason,
} from '../../src/tools/names.js';

const HASHED = /_[0-9a-f]{8}$/;

describe('makeToolName', () => {
  it('keeps a clean name that fits unchanged', () => {
    expect(makeToolName('fs', 'read_file')).toBe('mcp__fs__read_file');
    expect(makeToolName('my-server', 'Get-Thing_2')).toBe('mcp__my-server__Get-Thing_2');
  });

  it.each([
    ['get.weather', /^mcp__s__get_weather_[0-9a-f]{8}$/],
    ['a  b!!c', /^mcp__s__a_b_c_[0-9a-f]{8}$/],
    ['überprüfen', /^mcp__s___berpr_fen_[0-9a-f]{8}$/],
    ['🔧', /^mcp__s___[0-9a-f]{8}$/],
    ['', /^mcp__s___[0-9a-f]{8}$/],
  ])('sanitizes %j into a hashed name', (tool, pattern) => {
    expect(makeToolName('s', tool)).toMatch(pattern);
  });

  it('gives distinct names to tools that sanitize alike', () => {
    const names = ['a.b', 'a b', 'a/b', 'a:b', 'a.b.'].map((t) => makeToolName('s', t));
    expect(new Set(names).size).toBe(names.length);
    expect(names).not.toContain(makeToolName('s', 'a_b'));
  });

  it('always gives the same name for the same input', () => {
    expect(makeToolName('s', 'x'.repeat(300))).toBe(makeToolName('s', 'x'.repeat(300)));
    expect(makeToolName('s', 'get.weather')).toBe(makeToolName('s', 'get.weather'));
  });

  it('hashes the server too, so the same tool on two servers gets different suffixes', () => {
    const a = makeToolName('aa', 'get.weather');
    const b = makeToolName('bb', 'get.weather');
    expect(a.slice(-8)).not.toBe(b.slice(-8));
  });

  it('shortens long names to maxLength with a hash suffix', () => {
    const long = 'x'.repeat(100);
    const name = makeToolName('srv', long);
    expect(name).toHaveLength(DEFAULT_MAX_TOOL_NAME_LENGTH);
    expect(name).toMatch(HASHED);
    expect(makeToolName('srv', `${long}y`)).not.toBe(name);
  });

  it('keeps a long clean name whole when maxLength allows it', () => {
    const tool = 'x'.repeat(100);
    expect(makeToolName('srv', tool, { maxLength: 128 })).toBe(`mcp__srv__${tool}`);
  });

  it('fits the longest server name into the smallest maxLength', () => {
    const server = 's'.repeat(40);
    const name = makeToolName(server, 'some_long_tool_name', { maxLength: MIN_TOOL_NAME_LENGTH });
    expect(name.length).toBeLessThanOrEqual(MIN_TOOL_NAME_LENGTH);
    expect(parseToolName(name)?.server).toBe(server);
  });

  it('keeps tool names with "__" or a leading "_" unambiguous', () => {
    for (const tool of ['__x', 'a__b', '_', '___', 'a_', 'x__']) {
      const name = makeToolName('srv', tool);
      expect(name).toBe(`mcp__srv__${tool}`);
      expect(parseToolName(name)).toEqual({ server: 'srv', tool });
    }
  });

  it.each(['', 'a__b', '_a', 'a_', 'a b', 'a.b', 's'.repeat(41)])(
    'refuses the invalid server name %j',
    (server) => {
      expect(() => makeToolName(server, 't')).toThrow(ConfigError);
    },
  );

  it.each([0, 16, MIN_TOOL_NAME_LENGTH - 1, MAX_TOOL_NAME_LENGTH_LIMIT + 1, 60.5, Number.NaN])(
    'refuses maxLength %s',
    (maxLength) => {
      expect(() => makeToolName('s', 't', { maxLength })).toThrow(/maxToolNameLength/);
    },
  );
});

describe('isValidServerName', () => {
  it.each([
    ['fs', true],
    ['a-b_c', true],
    ['-x-', true],
    ['s'.repeat(40), true],
    ['', false],
    ['a__b', false],
    ['_a', false],
    ['a_', false],
    ['a.b', false],
    ['s'.repeat(41), false],
  ])('%j is %s', (server, valid) => {
    expect(isValidServerName(server)).toBe(valid);
  });
});

describe('parseToolName', () => {
  it.each([
    ['mcp__fs__read_file', { server: 'fs', tool: 'read_file' }],
    ['mcp__a_b__c', { server: 'a_b', tool: 'c' }],
    ['mcp__fs____x', { server: 'fs', tool: '__x' }],
    ['mcp__fs___x', { server: 'fs', tool: '_x' }],
    ['mcp__-__x', { server: '-', tool: 'x' }],
  ])('parses %j', (name, expected) => {
    expect(parseToolName(name)).toEqual(expected);
  });

  it.each([
    'read_file',
    'mcp__fs',
    'mcp__fs__',
    'mcp____x',
    'mcp___fs__x',
    'mcp_fs__x',
    'MCP__fs__x',
    'mcp__fs__a.b',
    'mcp__fs__a b',
    `mcp__${'s'.repeat(41)}__x`,
    '',
  ])('returns null for %j', (name) => {
    expect(parseToolName(name)).toBeNull();
  });
});

describe('unsafeToolNameReason', () => {
  it.each([
    ['', /empty/],
    ['a:b', /':'/],
    ['fs:*', /':'/],
    ['read*', /'\*'/],
    ['a b', /whitespace \(U\+0020\)/],
    ['a\tb', /whitespace/],
    ['a\u00a0b', /whitespace \(U\+00A0\)/],
    ['a\u2028b', /whitespace/],
    ['a\u3000b', /whitespace/],
    ['a\u0000b', /control or format character \(U\+0000\)/],
    ['a\u007fb', /control or format/],
    ['read\u200bfile', /control or format character \(U\+200B\)/],
    ['read\u202efile', /control or format character \(U\+202E\)/],
    ['\ufeffread', /control or format/],
    ['a\u00adb', /control or format/],
    ['a\ud800b', /unpaired surrogate/],
    ['x'.repeat(257), /longer than 256/],
  ])('refuses %j', (tool, reason) => {
    expect(unsafeToolNameReason(tool)).toMatch(reason);
  });

  it.each(['read_file', 'get.weather', 'a-b/c', 'überprüfen', '日本語', '🔧tool', 'x'.repeat(256)])(
    'accepts %j',
    (tool) => {
      expect(unsafeToolNameReason(tool)).toBeUndefined();
    },
  );
});

describe('ToolNameRegistry', () => {
  it('returns the same name when the same tool registers again', () => {
    const registry = new ToolNameRegistry();
    const first = registry.register('fs', 'read_file');
    expect(first).toEqual({ name: 'mcp__fs__read_file' });
    expect(registry.register('fs', 'read_file')).toEqual(first);
    expect(registry.size).toBe(1);
  });

  it('keeps both tools reachable and reports the collision when a name is already taken', () => {
    const registry = new ToolNameRegistry();
    const dotted = registry.register('s', 'a.b');
    // A tool whose original name is exactly the hashed form of `a.b`.
    const lookalike = dotted.name.slice('mcp__s__'.length);
    const second = registry.register('s', lookalike);
    expect(second.name).not.toBe(dotted.name);
    expect(second.collision).toEqual({ name: dotted.name, other: { server: 's', tool: 'a.b' } });
    expect(registry.resolve(dotted.name)).toEqual({ server: 's', tool: 'a.b' });
    expect(registry.resolve(second.name)).toEqual({ server: 's', tool: lookalike });
    expect(second.name).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(second.name.length).toBeLessThanOrEqual(DEFAULT_MAX_TOOL_NAME_LENGTH);
  });

  it('reports the collision whichever of the two tools comes first', () => {
    const hashed = makeToolName('s', 'a.b');
    const registry = new ToolNameRegistry();
    registry.register('s', hashed.slice('mcp__s__'.length));
    const second = registry.register('s', 'a.b');
    expect(second.collision?.other).toEqual({ server: 's', tool: hashed.slice('mcp__s__'.length) });
    expect(registry.resolve(second.name)).toEqual({ server: 's', tool: 'a.b' });
    expect(registry.names()).toHaveLength(2);
  });

  it('resolves only names it assigned', () => {
    const registry = new ToolNameRegistry();
    registry.register('fs', 'read_file');
    expect(registry.resolve('mcp__fs__write_file')).toBeUndefined();
    expect(registry.resolve('read_file')).toBeUndefined();
    expect(registry.resolve('__proto__')).toBeUndefined();
    expect(registry.resolve('constructor')).toBeUndefined();
  });

  it('calls back with the original tool name, not the sanitized one', () => {
    const registry = new ToolNameRegistry();
    const { name } = registry.register('web', 'get.weather');
    expect(registry.resolve(name)).toEqual({ server: 'web', tool: 'get.weather' });
    expect(registry.nameOf('web', 'get.weather')).toBe(name);
  });

  it('hands out entries the caller cannot change', () => {
    const registry = new ToolNameRegistry();
    const { name } = registry.register('fs', 'read_file');
    const ref = registry.resolve(name) as { tool: string };
    expect(() => {
      ref.tool = 'write_file';
    }).toThrow(TypeError);
    expect(registry.resolve(name)?.tool).toBe('read_file');
  });

  it('forgets one tool on unregister and every tool of a server on removeServer', () => {
    const registry = new ToolNameRegistry();
    registry.register('fs', 'read_file');
    registry.register('fs', 'write_file');
    registry.register('web', 'fetch');
    expect(registry.unregister('fs', 'read_file')).toBe(true);
    expect(registry.unregister('fs', 'read_file')).toBe(false);
    expect(registry.resolve('mcp__fs__read_file')).toBeUndefined();
    expect(registry.removeServer('fs')).toEqual(['mcp__fs__write_file']);
    expect(registry.removeServer('fs')).toEqual([]);
    expect(registry.names()).toEqual(['mcp__web__fetch']);
    expect(registry.nameOf('fs', 'write_file')).toBeUndefined();
  });

  it('lists names in registration order', () => {
    const registry = new ToolNameRegistry();
    registry.register('b', 'z');
    registry.register('a', 'y');
    expect(registry.names()).toEqual(['mcp__b__z', 'mcp__a__y']);
  });

  it('uses its maxLength for every name', () => {
    const registry = new ToolNameRegistry({ maxLength: 100 });
    expect(registry.maxLength).toBe(100);
    expect(registry.register('s', 'x'.repeat(200)).name).toHaveLength(100);
  });

  it('refuses an out-of-range maxLength with a coded error', () => {
    let caught: unknown;
    try {
      new ToolNameRegistry({ maxLength: 300 });
    } catch (error) {
      caught = error;
    }
    expect(isInterlockError(caught, 'INVALID_CONFIG')).toBe(true);
  });
});

describe('ToolNameRegistry.closestNames', () => {
  const registry = new ToolNameRegistry();
  for (const tool of ['read_file', 'write_file', 'list_directory', 'read_multiple_files']) {
    registry.register('fs', tool);
  }
  registry.register('web', 'fetch');

  it.each([
    ['read_file', 'mcp__fs__read_file'],
    ['mcp__fs__reed_file', 'mcp__fs__read_file'],
    ['MCP__FS__READ_FILE', 'mcp__fs__read_file'],
    ['fs__write_file', 'mcp__fs__write_file'],
    ['fetch', 'mcp__web__fetch'],
    ['mcp__web__fetch_url', 'mcp__web__fetch'],
    ['list_dir', 'mcp__fs__list_directory'],
  ])('suggests the closest name for %j first', (query, best) => {
    expect(registry.closestNames(query)[0]).toBe(best);
  });

  it('suggests nothing for a name unlike any tool', () => {
    expect(registry.closestNames('completely_unrelated_thing')).toEqual([]);
    expect(registry.closestNames('')).toEqual([]);
  });

  it('returns at most limit names', () => {
    expect(registry.closestNames('file', 1)).toHaveLength(1);
    expect(registry.closestNames('file', 0)).toEqual([]);
    expect(registry.closestNames('mcp__fs__').length).toBeLessThanOrEqual(3);
  });

  it('stays quick and bounded for a huge bogus name', () => {
    expect(registry.closestNames('x'.repeat(100_000))).toEqual([]);
  });
});
