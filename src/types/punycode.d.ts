/** What Interlock uses from `punycode.js` (RFC 3492), which ships no types of its own (a CommonJS default export). */
declare module 'punycode.js' {
  const punycode: {
    /** Decodes a punycode string (without the `xn--` prefix); throws a RangeError on invalid input. */
    decode(input: string): string;
  };
  export default punycode;
}
