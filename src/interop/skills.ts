/**
 * Skills (the Skills extension `io.modelcontextprotocol/skills`, SEP-2640; issue 42) through the invocation pipeline,
 * as resource reads go (request-path.ts): a span, the server's call slot, its statistics and events. Reading a skill's
 * file is decided by the gate on `mcp:{server}:skill:{name}` / `read` (default deny, audited, its decision on the
 * span), verified against the skill's entry (src/protocol/skills.ts: listed, size, digest, frontmatter), and only
 * then handed on and recorded into the session's flow state with the skill's content labels. A listing is not
 * decided: it carries names and frontmatter, and every file is decided when it is read.
 */
import { PermissionDeniedError } from '../errors.js';
import { SpanKind } from '../otel.js';
import {
  getSkillEntry,
  listSkillEntries,
  readSkillFile,
  type SkillEntry,
  skillNameOf,
  type VerifiedSkillFile,
} from '../protocol/skills.js';
import { FlowState } from '../security/flow.js';
import type { CapabilityGate } from '../security/gate.js';
import { resourceFor } from '../security/pattern.js';
import { type CallFlow, callFlow } from './flow-context.js';
import { base, type RequestPathDeps, type RequestPathOptions, requestPipeline } from './request-path.js';

/** A skill a server lists, with the name and resource rules decide it by. */
export interface SkillInfo extends SkillEntry {
  readonly server: string;
  /** The skill's path (`pdf-processing`, `acme/billing/refunds`): the `{name}` of `mcp:{server}:skill:{name}`. */
  readonly name: string;
  /** `mcp:{server}:skill:{name}`: what a rule names to allow or deny reading it (action `read`). */
  readonly resource: string;
}

/** A skill file that was allowed, read and verified. */
export interface SkillFile extends VerifiedSkillFile {
  readonly server: string;
  /** The skill's name (see {@link SkillInfo.name}). */
  readonly name: string;
  /** The skill's `SKILL.md` URI. */
  readonly skill: string;
}

/** Options of {@link readSkillThrough} (`MCPClientManager.readSkill`). */
export interface SkillReadOptions extends RequestPathOptions {
  /** The file to read: a path relative to the skill's root (`references/FORMS.md`) or a URI. @default `SKILL.md` */
  file?: string | undefined;
  /** The agent on whose behalf it is read (conditions, audit). @default the manager's or view's agent */
  agent?: string | undefined;
  /** Who the agent acts for (audit, shared quotas). @default the manager's principal */
  principal?: string | undefined;
  /**
   * The session the file's content enters (issue 42): decided with it in the check context, and the verified content
   * is recorded into it with the skill's content labels. @default the flow state of the manager or view
   */
  flow?: FlowState | undefined;
}

/** What a skill read names: the server, the skill (an entry `listSkills` gave, or its `SKILL.md` URI), the options. */
export type SkillRead = [server: string, skill: SkillEntry | string, options: SkillReadOptions];

/** A listing records nothing: it carries names and frontmatter, and every file is recorded when it is read. */
const LISTING: CallFlow = { flow: new FlowState(), labels: undefined, content: [] };

const listPipeline = requestPipeline<SkillInfo[]>(false);
const readPipeline = requestPipeline<SkillFile>();

/** The skills `server` lists (none when it does not declare the extension); skills no rule could name are left out. */
export function listSkillsThrough(
  deps: RequestPathDeps,
  gate: CapabilityGate,
  server: string,
  options: RequestPathOptions,
): Promise<SkillInfo[]> {
  return listPipeline({
    ...base(deps, gate, server, options),
    kind: 'skill',
    // Never decided (a listing skips authorize); the invocation still names what it is about: every skill.
    request: { resource: resourceFor.skill(server, '*'), action: 'list', server },
    flow: LISTING,
    textOf: () => '',
    what: 'skills/list',
    method: 'skills/list',
    target: server,
    span0: {
      name: 'skills/list',
      options: {
        kind: SpanKind.CLIENT,
        attributes: { 'mcp.method.name': 'skills/list', 'interlock.server': server },
      },
    },
    send: async (client, request) => {
      const skills: SkillInfo[] = [];
      for (const entry of await listSkillEntries(client, request)) {
        const name = skillNameOf(entry.uri);
        if (name !== undefined)
          skills.push({ ...entry, server, name, resource: resourceFor.skill(server, name) });
      }
      return skills;
    },
  });
}

/**
 * Reads one file of `skill` (an entry `listSkills` gave, or a `SKILL.md` URI, whose entry `skills/get` fetches) from
 * `server`: decided on `mcp:{server}:skill:{name}` / `read`, then read and verified. Nothing of a file that fails
 * verification is returned or recorded.
 */
export function readSkillThrough(
  deps: RequestPathDeps,
  gate: CapabilityGate,
  defaults: { agent: string | undefined; principal: string | undefined; flow: FlowState },
  ...[server, skill, options]: SkillRead
): Promise<SkillFile> {
  const uri = typeof skill === 'string' ? skill : skill.uri;
  const name = skillNameOf(uri);
  if (name === undefined) {
    // A fixed rule, not the policy's: a skill no rule could name unambiguously is never read.
    return Promise.reject(
      new PermissionDeniedError(
        {
          resource: resourceFor.resource(server, uri),
          action: 'read',
          reason:
            'The skill is not read: its URI is no SKILL.md URI whose path a rule can name (letters, digits and - . _ ~ in each segment).',
        },
        { server },
      ),
    );
  }
  const resource = resourceFor.skill(server, name);
  const flow = callFlow(options.flow ?? defaults.flow, deps.flowLabels, resource);
  return readPipeline({
    ...base(deps, gate, server, options),
    kind: 'skill',
    request: {
      resource,
      action: 'read',
      context: {
        agent: options.agent ?? defaults.agent,
        principal: options.principal ?? defaults.principal,
        flow: flow.flow,
        labels: flow.labels,
      },
      server,
    },
    flow,
    // Recorded by the pipeline once `send` resolved, so only verified content enters the session.
    textOf: (file) => file.text ?? '',
    what: `skill '${name}'`,
    method: 'resources/read',
    target: options.file ?? uri,
    span0: {
      name: `skills/read ${name}`,
      options: {
        kind: SpanKind.CLIENT,
        attributes: {
          'mcp.method.name': 'resources/read',
          'interlock.skill': name,
          'interlock.skill.uri': uri,
          'interlock.skill.file': options.file ?? 'SKILL.md',
          'interlock.server': server,
        },
      },
    },
    send: async (client, request) => {
      const entry = typeof skill === 'string' ? await getSkillEntry(client, server, skill, request) : skill;
      const file = await readSkillFile(client, server, entry, options.file, request);
      return { ...file, server, name, skill: entry.uri };
    },
  });
}
