/**
 * The images and audio of a tool result, for models that can see or hear them (issue 18, "Multimodal
 * results"). The string from `mcpResultToString` stays the default and keeps a placeholder for each part;
 * these parts are what a caller that opted in sends beside it.
 */
import type { ContentBlock } from '@modelcontextprotocol/client';
import { isJsonObject } from '../json.js';

/** One image or audio clip of a tool result, as base64 data with its media type. */
export interface MediaContent {
  readonly type: 'image' | 'audio';
  /** Base64, as the server sent it. */
  readonly data: string;
  /** The IANA media type the server gave, e.g. `image/png` or `audio/wav`. */
  readonly mimeType: string;
}

/** A media type of the given kind (`image/png` for `image`), or undefined when it names another kind. */
function mediaTypeOf(kind: 'image' | 'audio', value: unknown): string | undefined {
  return typeof value === 'string' && value.toLowerCase().startsWith(`${kind}/`) ? value : undefined;
}

/**
 * The image and audio parts of a result's content, in order: MCP `image` and `audio` parts, and embedded
 * resources whose blob has an `image/*` or `audio/*` type. Parts without base64 data or with a media type of
 * another kind are left out (their placeholder in the text still tells the model they were there).
 */
export function resultMedia(content: readonly ContentBlock[] | readonly unknown[]): MediaContent[] {
  const out: MediaContent[] = [];
  for (const part of content as readonly unknown[]) {
    if (!isJsonObject(part)) continue;
    if ((part.type === 'image' || part.type === 'audio') && typeof part.data === 'string') {
      const mimeType = mediaTypeOf(part.type, part.mimeType);
      if (mimeType !== undefined && part.data.length > 0)
        out.push({ type: part.type, data: part.data, mimeType });
    } else if (
      part.type === 'resource' &&
      isJsonObject(part.resource) &&
      typeof part.resource.blob === 'string'
    ) {
      const blob = part.resource.blob;
      const image = mediaTypeOf('image', part.resource.mimeType);
      const audio = mediaTypeOf('audio', part.resource.mimeType);
      if (blob.length === 0) continue;
      if (image !== undefined) out.push({ type: 'image', data: blob, mimeType: image });
      else if (audio !== undefined) out.push({ type: 'audio', data: blob, mimeType: audio });
    }
  }
  return out;
}
