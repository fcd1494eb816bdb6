/**
 * The Skills extension (`io.modelcontextprotocol/skills`, SEP-2640) on the client side (issue 42), through the SDK's
 * public `SkillsClient` (`@modelcontextprotocol/client/ext/skills`): it lists a server's skills, gets one entry by
 * its `SKILL.md` URI, and reads a skill's files, verifying each one against the entry (listed, size, SHA-256 digest,
 * and for `SKILL.md` the frontmatter) before anything of it is handed on. This module is the one place that touches
 * that API; a failed verification becomes a coded {@link SkillIntegrityError} here, whose operator hint says what
 * differs. Gating, tracing and flow recording are the interop area's (src/interop/skills.ts).
 * @internal
 */
import type { Client } from '@modelcontextprotocol/client';
import { type Skill, SkillsClient, SkillVerificationError } from '@modelcontextprotocol/client/ext/skills';
import { ServerRequestError, SkillIntegrityError } from '../errors.js';
import { SKILLS_EXTENSION } from './client.js';

/** One file of a skill, as its entry lists it: what a host verifies the file against. */
export interface SkillFileEntry {
  /** The file's resource URI. */
  readonly uri: string;
  /** `sha256:` and the lowercase hex SHA-256 of the file's raw bytes. */
  readonly digest: string;
  /** The length of the file's raw bytes. */
  readonly size: number;
}

/** One skill entry, as `skills/list` and `skills/get` carry it (SEP-2640, "Skill Entries"). */
export interface SkillEntry {
  /** The resource URI of the skill's `SKILL.md`. */
  readonly uri: string;
  /** The `SKILL.md` frontmatter, verbatim (untrusted: it comes from the server). */
  readonly frontmatter: Readonly<Record<string, unknown>> & {
    readonly name: string;
    readonly description: string;
  };
  /** Every file of the skill with its digest, or `"dynamic"` (no digests: Interlock reads none of its files). */
  readonly resources: readonly SkillFileEntry[] | 'dynamic';
}

/** A skill file that was read and verified against its skill entry. */
export interface VerifiedSkillFile {
  /** The file's URI, as the entry spells it. */
  readonly uri: string;
  readonly mimeType?: string | undefined;
  /** The file's text, when the server sent text (always for `SKILL.md`). */
  readonly text?: string | undefined;
  /** Exactly the bytes the entry's digest covers. */
  readonly bytes: Uint8Array;
}

/** What a skills request takes. */
export interface SkillRequest {
  timeout: number;
  signal?: AbortSignal | undefined;
}

const SKILL_MD = '/SKILL.md';
/** A segment of a skill's path Interlock names in a rule: unreserved URI characters only (RFC 3986). */
const PATH_SEGMENT = /^[A-Za-z0-9._~-]+$/;

/**
 * The name a skill is gated by: its `<skill-path>`, everything between `scheme://` and `/SKILL.md` of its canonical
 * URI (`pdf-processing`, `acme/billing/refunds`), whose final segment is the skill's `name`. Undefined for a URI that
 * is no `SKILL.md` URI, or whose path has a segment outside the unreserved characters (or `.`, `..`): such a skill
 * cannot be named in a rule without ambiguity, so it is refused rather than read.
 */
export function skillNameOf(uri: string): string | undefined {
  let canonical: string;
  try {
    canonical = new URL(uri).href;
  } catch {
    return undefined;
  }
  const start = canonical.indexOf('://');
  if (start < 0 || !canonical.endsWith(SKILL_MD)) return undefined;
  const path = canonical.slice(start + 3, -SKILL_MD.length);
  const segments = path.split('/');
  for (const segment of segments) {
    if (!PATH_SEGMENT.test(segment) || segment === '.' || segment === '..') return undefined;
  }
  return path;
}

const clients = new WeakMap<Client, SkillsClient>();

/** The SDK's skills client over `client` (one per client: a reconnect brings a new client, and a new one). */
function skillsOf(client: Client): SkillsClient {
  let skills = clients.get(client);
  if (skills === undefined) {
    skills = new SkillsClient(client);
    clients.set(client, skills);
  }
  return skills;
}

/**
 * The server's skills, every page walked. A server that does not declare the extension has none (nothing is sent:
 * clients issue `skills/list` only after the declaration). A listing with an invalid entry is refused whole (the
 * SDK's error names each entry and why).
 */
export async function listSkillEntries(client: Client, request: SkillRequest): Promise<SkillEntry[]> {
  const skills = skillsOf(client);
  if (!skills.supported) return [];
  const listing = await skills.list({}, request);
  return listing.skills;
}

/** One skill's entry by its `SKILL.md` URI (`skills/get`), listed or not. */
export async function getSkillEntry(
  client: Client,
  server: string,
  uri: string,
  request: SkillRequest,
): Promise<SkillEntry> {
  const skills = skillsOf(client);
  if (!skills.supported) throw notServed(server);
  return (await skills.get(uri, request)).skill;
}

/**
 * Reads file `ref` of `skill` (a path relative to the skill's root, or an absolute URI; `SKILL.md` when undefined)
 * and verifies it against the entry. A file that fails is a {@link SkillIntegrityError}, and nothing of it is
 * returned; a `"dynamic"` skill has nothing to verify against and is refused before anything is sent.
 */
export async function readSkillFile(
  client: Client,
  server: string,
  skill: SkillEntry,
  ref: string | undefined,
  request: SkillRequest,
): Promise<VerifiedSkillFile> {
  const skills = skillsOf(client);
  if (!skills.supported) throw notServed(server);
  if (skill.resources === 'dynamic') {
    throw new SkillIntegrityError(
      'unverifiable',
      {
        skill: skill.uri,
        uri: ref ?? skill.uri,
        operatorHint: `Server '${server}' lists the files of skill ${skill.uri} as "dynamic", so no digest can verify them; Interlock reads only skills whose files are listed with digests. Ask the server's authors to publish digests.`,
      },
      { server },
    );
  }
  try {
    const file = await skills.read(skill as Skill, ref, request);
    return { uri: file.uri, mimeType: file.mimeType, text: file.text, bytes: file.bytes };
  } catch (err) {
    if (err instanceof SkillVerificationError) throw integrityError(err, server, skill);
    throw err;
  }
}

function notServed(server: string): ServerRequestError {
  return new ServerRequestError(
    `Server '${server}' does not serve skills (it declares no ${SKILLS_EXTENSION} extension).`,
    -32601,
    undefined,
    { server },
  );
}

/**
 * The SDK's verification failure as our coded error: the message names the file, the operator hint says what
 * differs. The SDK's message is the one account of the difference it gives (both digests, both sizes, or the
 * frontmatter fields); it goes to the hint, never to the message a model may read.
 */
function integrityError(err: SkillVerificationError, server: string, skill: SkillEntry): SkillIntegrityError {
  const listed =
    skill.resources === 'dynamic' ? undefined : skill.resources.find((entry) => entry.uri === err.uri);
  const expected =
    listed === undefined ? '' : ` The entry lists ${listed.digest} (${listed.size} bytes) for it.`;
  const fix =
    err.reason === 'unlisted'
      ? 'Only files the skill entry lists are read; ask for one of them.'
      : 'The server served content its own skill entry does not describe (tampered, or published out of step): do not use this skill until its operator fixes it.';
  return new SkillIntegrityError(
    err.reason,
    {
      skill: skill.uri,
      uri: err.uri,
      operatorHint: `Server '${server}', skill ${skill.uri}, file ${err.uri}: ${err.message}.${expected} ${fix}`,
    },
    { server, cause: err },
  );
}
