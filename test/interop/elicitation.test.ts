/** The checks on what an elicitation asks (src/interop/elicitation.ts): URL safety, and form fields and defaults. */
import { describe, expect, it } from 'vitest';
import { checkElicitationUrl, formFields, withSchemaDefaults } from '../../src/interop/elicitation.js';

const check = (url: string) => checkElicitationUrl({ url, message: 'm' });

describe('checkElicitationUrl', () => {
  it.each([
    'https://auth.example.com/connect?x=1#y',
    'http://localhost:8080/cb',
    'http://127.0.0.1/cb',
    'http://[::1]:3000/',
  ])('accepts %s and keeps it exactly as sent', (url) => {
    const result = check(url);
    expect(result.ok && result.request.url).toBe(url);
  });

  it.each([
    ['javascript:alert(1)', /scheme 'javascript:'/],
    ['JavaScript:alert(1)', /scheme 'javascript:'/],
    ['file:///etc/passwd', /scheme 'file:'/],
    ['data:text/html,x', /scheme 'data:'/],
    ['ftp://example.com/', /scheme 'ftp:'/],
    ['http://example.com/', /plain http to 'example.com'/],
    ['http://127.0.0.1.nip.io/', /plain http/],
    ['https://user:pw@example.com/', /user name or password/],
    ['https://example.com/\u0000', /control characters/],
    ['https://example.com/ x', /spaces or control characters/],
    ['https://example.com/\u0085', /control characters/],
    ['https://example.com/\u202E', /invisible or formatting character U\+202E$/],
    ['https://example.com/\uFEFF', /character U\+FEFF$/],
    ['https://example.com/\u3164', /character U\+3164$/],
    ['https://example.com/\u00A0', /character U\+00A0$/],
    ['https://example.com/%e2%81%a6', /character U\+2066, percent-encoded/],
    ['https://example.com/%C2%AD', /character U\+00AD, percent-encoded/],
    // Punycode for a bidi override: refused the same way on every Node version (Node 24's parser accepts it).
    ['https://xn--example-376c.com/', /invisible or formatting character U\+202E, in punycode$/],
    ['https://a@XN--example-376c.com:443/', /U\+202E, in punycode$/],
    ['https://xn--999999999999a.com/', /host label 'xn--999999999999a' is not valid punycode/],
    ['/relative/path', /not a valid absolute URL/],
    ['', /no URL/],
  ])('refuses %j', (url, why) => {
    const result = check(url);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toMatch(why);
  });

  it('flags every punycode label, and decodes it for display', () => {
    const result = check('https://login.xn--80ak6aa92e.com/');
    expect(result.ok && result.request).toMatchObject({
      host: 'login.xn--80ak6aa92e.com',
      displayHost: 'login.аррӏе.com',
      punycode: true,
    });
    // A Unicode host arrives as punycode from the parser: still flagged.
    const unicode = check('https://аррӏе.com/');
    expect(unicode.ok && unicode.request.punycode).toBe(true);
  });
});

describe('form fields and defaults', () => {
  const schema = {
    type: 'object' as const,
    properties: {
      name: { type: 'string' as const, title: 'Name', format: 'email' },
      age: { type: 'integer' as const, default: 30 },
      agree: { type: 'boolean' as const },
      color: { type: 'string' as const, enum: ['red', 'blue'], enumNames: ['Red', 'Blue'] },
      size: { type: 'string' as const, oneOf: [{ const: 's', title: 'Small' }], default: 's' },
      tags: { type: 'array' as const, items: { anyOf: [{ const: 'a', title: 'A' }] }, default: ['a'] },
      plain: { type: 'array' as const, items: { type: 'string' as const, enum: ['x', 'y'] } },
    },
    required: ['name'],
  };

  it('normalizes every enum form into options with titles', () => {
    const fields = formFields(schema as never);
    expect(fields.map((f) => [f.name, f.kind, f.required])).toEqual([
      ['name', 'string', true],
      ['age', 'integer', false],
      ['agree', 'boolean', false],
      ['color', 'choice', false],
      ['size', 'choice', false],
      ['tags', 'choices', false],
      ['plain', 'choices', false],
    ]);
    expect(fields[3]?.options).toEqual([
      { value: 'red', title: 'Red' },
      { value: 'blue', title: 'Blue' },
    ]);
    expect(fields[5]?.options).toEqual([{ value: 'a', title: 'A' }]);
    expect(fields[6]?.options.map((o) => o.value)).toEqual(['x', 'y']);
    expect(fields[0]).toMatchObject({ title: 'Name', format: 'email' });
  });

  it('fills defaults for fields left out, copies array defaults, and leaves declines alone', () => {
    const filled = withSchemaDefaults(
      { action: 'accept', content: { name: 'a@b.c', age: 5 } },
      schema as never,
    );
    expect(filled.content).toEqual({ name: 'a@b.c', age: 5, size: 's', tags: ['a'] });
    expect(filled.content?.tags).not.toBe(schema.properties.tags.default);
    expect(withSchemaDefaults({ action: 'decline' }, schema as never)).toEqual({ action: 'decline' });
  });
});
