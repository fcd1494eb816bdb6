/**
 * Every member of the SDK's client that Interlock relies on and the SDK does not publish (issue 43), in one place.
 * Nothing outside this file reads or writes them; test/protocol/sdk-internals.test.ts pins what each one DOES on a
 * real client and server pair, and names the member and what to re-check when it fails after an SDK upgrade.
 *
 * TypeScript-private members (read through the views below):
 * - `_requestMessageId`: the id counter of `Protocol`; a direct `tools/call` takes its id from it, so its ids never
 *   collide with the SDK's own requests.
 * - `_progressHandlers`: the table `Protocol._onprogress` looks a `notifications/progress` token up in; a direct call
 *   puts its handler there when progress for it arrives, so the SDK's notification checks stay in force.
 *
 * Protected members, documented by the SDK for role subclasses (overridden or called in client.ts; the compiler
 * checks that they exist, the test checks what they do):
 * - `_wireCodec()`: the negotiated era's codec. Its type (`WireCodec`) is not exported: {@link WireCodec} names the
 *   three members used, `era`, `decodeResult` and `validateResult`.
 * - `_outboundMetaEnvelope()`: the 2026-07-28 `_meta` envelope (the tasks extension is declared in it).
 * - `_resolveNonCompleteResult()`: the SDK's multi-round-trip driver, for a direct call whose caller did not ask to
 *   see `input_required` answers itself (with server-request handlers, input-rounds.ts drives every round).
 * - `_onclose()`: the close hook; direct calls in flight are settled there.
 * @internal
 */
import type { Client } from '@modelcontextprotocol/client';

/** The codec's reading of a raw result: `complete`, `invalid`, or a kind the role class resolves (`input_required`). */
export type DecodedResult =
  | { kind: 'complete'; result: unknown }
  | { kind: 'invalid'; error: Error }
  | { kind: string; inputRequests?: unknown; requestState?: unknown; _meta?: unknown };

/** What Interlock uses of the SDK's era codec (its `WireCodec` type is not exported). */
export interface WireCodec {
  /** The protocol revision the codec speaks (`2025-11-25`, `2026-07-28`). */
  readonly era?: string;
  decodeResult?(method: string, raw: unknown): DecodedResult;
  validateResult(
    method: string,
    raw: unknown,
  ): { ok: true; value: unknown } | { ok: false; reason: string; message?: string };
}

/** The TypeScript-private members of `Protocol` this file reads (see the module comment). */
interface PrivateMembers {
  _requestMessageId: number;
  _progressHandlers: Map<number, (progress: unknown) => void>;
}

/** The names of every SDK member relied on, for messages and the pinning test. */
export const SDK_MEMBERS = [
  '_requestMessageId',
  '_progressHandlers',
  '_wireCodec',
  '_outboundMetaEnvelope',
  '_resolveNonCompleteResult',
  '_onclose',
] as const;

/** Whether `client` has the private members in the shape read here; if not, calls take the SDK's own path. */
export function hasPrivateMembers(client: Client): boolean {
  const view = client as unknown as Partial<PrivateMembers>;
  return typeof view._requestMessageId === 'number' && view._progressHandlers instanceof Map;
}

/** The next request id, taken from the SDK's own counter (`_requestMessageId`). */
export function takeRequestId(client: Client): number {
  return (client as unknown as PrivateMembers)._requestMessageId++;
}

/** Registers `handler` for progress with token `id` in the SDK's table (`_progressHandlers`), unless one is there. */
export function listenForProgress(client: Client, id: number, handler: (progress: unknown) => void): void {
  const handlers = (client as unknown as PrivateMembers)._progressHandlers;
  if (!handlers.has(id)) handlers.set(id, handler);
}

/** Removes the progress handler for token `id` from the SDK's table (`_progressHandlers`). */
export function stopListeningForProgress(client: Client, id: number): void {
  (client as unknown as PrivateMembers)._progressHandlers.delete(id);
}

/** The negotiated era's codec (`_wireCodec()`), or undefined when it is missing or not the shape used here. */
export function wireCodecOf(client: Client): WireCodec | undefined {
  const accessor = (client as unknown as { _wireCodec?: () => unknown })._wireCodec;
  if (typeof accessor !== 'function') return undefined;
  const codec = accessor.call(client) as Partial<WireCodec> | undefined;
  return typeof codec?.validateResult === 'function' ? (codec as WireCodec) : undefined;
}
