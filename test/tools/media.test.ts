import { describe, expect, it } from 'vitest';
import { resultMedia } from '../../src/tools/media.js';

describe('resultMedia', () => {
  it('keeps image and audio parts and image or audio blobs, in order', () => {
    const media = resultMedia([
      { type: 'text', text: 'Here:' },
      { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      { type: 'audio', data: 'BBBB', mimeType: 'audio/wav' },
      { type: 'resource', resource: { uri: 'file:///a.jpg', mimeType: 'image/jpeg', blob: 'CCCC' } },
      { type: 'resource', resource: { uri: 'file:///a.mp3', mimeType: 'audio/mpeg', blob: 'DDDD' } },
    ]);
    expect(media).toEqual([
      { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      { type: 'audio', data: 'BBBB', mimeType: 'audio/wav' },
      { type: 'image', data: 'CCCC', mimeType: 'image/jpeg' },
      { type: 'audio', data: 'DDDD', mimeType: 'audio/mpeg' },
    ]);
  });

  it('leaves out parts whose media type is of another kind, missing, or whose data is empty', () => {
    expect(
      resultMedia([
        { type: 'image', data: 'AAAA', mimeType: 'application/pdf' },
        { type: 'audio', data: 'BBBB', mimeType: 'image/png' },
        { type: 'image', data: '', mimeType: 'image/png' },
        { type: 'image', data: 'AAAA' },
        { type: 'resource', resource: { uri: 'file:///a.pdf', mimeType: 'application/pdf', blob: 'EEEE' } },
        { type: 'resource', resource: { uri: 'file:///a.txt', text: 'hello' } },
        { type: 'resource_link', uri: 'file:///b.png', name: 'b', mimeType: 'image/png' },
        null,
        'text',
      ]),
    ).toEqual([]);
  });
});
