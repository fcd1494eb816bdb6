import { describe, expect, it } from 'vitest';
import { ErrorCode, InteropError, isInteropError } from '../../src/errors.js';

describe('errors', () => {
  it('carries a stable code and its class name', () => {
    const err = new InteropError(ErrorCode.NOT_CONNECTED, 'x');
    expect(err.code).toBe('NOT_CONNECTED');
    expect(err.name).toBe('InteropError');
    expect(isInteropError(err, 'NOT_CONNECTED')).toBe(true);
    expect(isInteropError(new Error('x'))).toBe(false);
  });
});
