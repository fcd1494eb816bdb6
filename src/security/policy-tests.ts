/**
 * Policy tests (issue 40, "Policy tests"): cases written next to the policy, each a request and the decision the
 * policy must reach for it, run through the capability set itself (`CapabilitySet.check`: the same evaluation
 * every call goes through, no quota consumed, nothing audited). Coverage says which rules no case exercised.
 *
 * The file: `{ version: 1, cases: [{ name, tool | resource, action?, arguments?, annotations?, agent?, principal?,
 * flow?, at?, expect, rule? }] }`. One zod schema checks it, each problem at the case and field to fix.
 */
import { z } from 'zod';
import { once } from '../lazy.js';
import { CapabilitySet } from './capability-set.js';
import { type CarriedAnswer, FlowState } from './flow.js';
import { flowLabelSchemas, MAX_LABELS, type ServerLabels } from './flow-labels.js';
import { plainData } from './parse.js';
import { compilePattern, MAX_RESOURCE_LENGTH, matchPattern, resourceFor, schemeActions } from './pattern.js';
import type { Policy } from './policy.js';
import { RULE_ID_MESSAGE, RULE_ID_RE, type RuleInfo } from './rules.js';
import type { CheckContext, DecisionEffect, DecisionFlow } from './types.js';

/** The policy tests format version this code reads. */
export const POLICY_TESTS_VERSION = 1;
/** The file `interlock policy test` reads beside the project file when none is named. */
export const DEFAULT_POLICY_TESTS_FILE = 'interlock.policy-tests.yaml';
/** Most cases one file may hold. */
export const MAX_POLICY_TEST_CASES = 100_000;

/** An exposed tool name: `mcp__{server}__{tool}` (a server name never holds `__`). */
const EXPOSED_TOOL = /^mcp__([A-Za-z0-9_-]+?)__(.+)$/;

/** The schemas of the tests file, built on first use. */
export const policyTestSchemas = once(buildPolicyTestSchemas);

function buildPolicyTestSchemas() {
  const hint = z.boolean().optional();
  const testCase = z
    .strictObject({
      name: z.string().min(1).max(200).describe('What the case shows, as a sentence; unique in the file.'),
      tool: z
        .string()
        .regex(EXPOSED_TOOL, { message: "a tool is its exposed name, 'mcp__{server}__{tool}'" })
        .max(MAX_RESOURCE_LENGTH)
        .optional()
        .describe('The tool, by its exposed name (`mcp__notes__read_note`): resource `mcp:{server}:{tool}`.'),
      resource: z
        .string()
        .min(1)
        .max(MAX_RESOURCE_LENGTH)
        .optional()
        .describe(
          'The resource instead of a tool: `mcp:notes:read_note`, `mcp-resource:notes:notes://x`, `mcp:notes:sampling`.',
        ),
      action: z
        .string()
        .regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/, { message: "an action name such as 'execute' or 'read'" })
        .optional()
        .describe("The action; default: 'execute' for a tool, else the resource scheme's first action."),
      arguments: z
        .record(z.string(), z.unknown())
        .optional()
        .describe('The call arguments, for conditions that read them.'),
      annotations: z
        .strictObject({
          readOnlyHint: hint,
          destructiveHint: hint,
          idempotentHint: hint,
          openWorldHint: hint,
        })
        .optional()
        .describe("The tool's annotations, for conditions that read them."),
      agent: z.string().min(1).max(256).optional().describe("The agent; default: the project's `agent`."),
      caller: z
        .strictObject({
          method: z
            .enum(['jwt', 'apiKey', 'mtls', 'stdio'])
            .describe('How the caller authenticated to `interlock serve`.'),
          subject: z.string().min(1).max(256).describe('Its subject (a token `sub`, a key subject, a CN).'),
          clientId: z.string().min(1).max(256).optional().describe('Its OAuth client id (jwt).'),
          groups: z.array(z.string().min(1)).max(1000).optional().describe('Its groups.'),
          scopes: z.array(z.string().min(1)).max(1000).optional().describe('Its scopes.'),
        })
        .optional()
        .describe(
          'A caller of the gateway: the case is decided as `interlock serve` decides it, with the rules of the `gateway.principals` bindings the caller matches.',
        ),
      principal: z.string().min(1).max(256).optional().describe('Who the agent acts for.'),
      flow: z
        .strictObject({
          seen: z
            .array(flowLabelSchemas().label)
            .max(MAX_LABELS)
            .optional()
            .describe('Labels that have entered the session before this request.'),
          carries: z
            .array(
              z.strictObject({
                argument: z.string().min(1).max(256).describe('The argument (one of `arguments`).'),
                label: flowLabelSchemas().label.describe('The label of the content it carries.'),
                source: z
                  .string()
                  .min(1)
                  .max(MAX_RESOURCE_LENGTH)
                  .optional()
                  .describe('Where that content came from (a resource name); default `(policy test)`.'),
              }),
            )
            .max(1000)
            .optional()
            .describe('Arguments that carry recorded content with a label (its label counts as seen too).'),
          target: z
            .array(flowLabelSchemas().label)
            .max(MAX_LABELS)
            .optional()
            .describe(
              "Labels of the target besides those the policy's `labels` section and annotation defaults give it (the project file's server labels are added by `interlock policy test`).",
            ),
        })
        .optional()
        .describe(
          'The information flow of the session the request is made in (issue 42). Without it the session has seen nothing.',
        ),
      at: z.iso
        .datetime({ offset: true })
        .optional()
        .describe(
          'When the request is made (ISO 8601 with an offset), for rules with `expiresAt`; default: now.',
        ),
      expect: z
        .enum(['allow', 'deny', 'ask', 'default-deny'])
        .describe(
          'The decision: allow, deny (a deny rule decided), ask (an ask rule decided), default-deny (no rule allows).',
        ),
      rule: z
        .string()
        .regex(RULE_ID_RE, { message: RULE_ID_MESSAGE })
        .optional()
        .describe('The id of the rule that must decide.'),
    })
    .superRefine((c, ctx) => {
      if ((c.tool === undefined) === (c.resource === undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: c.tool === undefined ? ['tool'] : ['resource'],
          message: 'give either tool (mcp__{server}__{tool}) or resource, exactly one',
        });
      }
      if (c.caller !== undefined) {
        for (const key of ['agent', 'principal'] as const) {
          if (c[key] !== undefined)
            ctx.addIssue({
              code: 'custom',
              path: [key],
              message: `a caller's calls are made by the gateway for the caller's subject; remove ${key}, or caller`,
            });
        }
      }
      (c.flow?.carries ?? []).forEach((carried, i) => {
        if (c.arguments === undefined || !Object.hasOwn(c.arguments, carried.argument)) {
          ctx.addIssue({
            code: 'custom',
            path: ['flow', 'carries', i, 'argument'],
            message: `the case has no argument '${carried.argument}'; name one of its arguments`,
          });
        }
      });
      if (c.expect === 'default-deny' && c.rule !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['rule'],
          message: 'a default deny has no deciding rule; remove rule, or expect deny',
        });
      }
      if (c.resource !== undefined && schemeActions(c.resource.split(':', 1)[0] ?? '') === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['resource'],
          message: "the resource's scheme is not one of mcp, mcp-resource, mcp-prompt, tool",
        });
      }
    })
    .describe('One policy test: a request and the decision the policy must reach.');

  const file = plainData(
    z
      .strictObject({
        version: z.literal(POLICY_TESTS_VERSION).describe('The tests format version: 1.'),
        cases: z.array(testCase).min(1).max(MAX_POLICY_TEST_CASES).describe('The cases.'),
      })
      .superRefine((f, ctx) => {
        const first = new Map<string, number>();
        f.cases.forEach((c, i) => {
          const seen = first.get(c.name);
          if (seen === undefined) first.set(c.name, i);
          else
            ctx.addIssue({
              code: 'custom',
              path: ['cases', i, 'name'],
              message: `a case named '${c.name}' already exists (cases[${seen}]); give each case its own name`,
            });
        });
      })
      .describe('Policy tests: requests and the decisions the policy must reach for them.'),
  );
  return { testCase, file };
}

type Schemas = ReturnType<typeof buildPolicyTestSchemas>;
/** A valid tests file. */
export type PolicyTestFile = z.output<Schemas['file']>;
/** One case of a {@link PolicyTestFile}. */
export type PolicyTestCase = z.output<Schemas['testCase']>;
/** What a case expects. */
export type ExpectedEffect = PolicyTestCase['expect'];

/** The outcome of one case. */
export interface PolicyTestResult {
  readonly name: string;
  readonly index: number;
  readonly resource: string;
  readonly action: string;
  readonly passed: boolean;
  /** Decided with the rules of a gateway caller (`caller`). */
  readonly viaGateway: boolean;
  readonly expected: { readonly effect: ExpectedEffect; readonly rule: string | undefined };
  readonly actual: {
    readonly effect: DecisionEffect;
    readonly rule: string | undefined;
    readonly reason: string;
    /** The flow the decision was made on, when a flow condition of the deciding rule took part (issue 42). */
    readonly flow?: DecisionFlow | undefined;
  };
}

/** How often a rule was exercised. */
export interface RuleCoverage {
  readonly id: string;
  readonly effect: RuleInfo['effect'];
  readonly pattern: string;
  /** Cases this rule decided. */
  readonly decided: number;
  /** Cases whose request its pattern and actions matched while it was live (deciding or not). */
  readonly matched: number;
}

/** Every case's outcome and the rules' coverage. */
export interface PolicyTestReport {
  readonly results: readonly PolicyTestResult[];
  readonly passed: number;
  readonly failed: number;
  readonly coverage: readonly RuleCoverage[];
  /** Rules no case decided or matched. */
  readonly unexercised: readonly RuleCoverage[];
}

/** Options of {@link runPolicyTests}. */
export interface RunPolicyTestsOptions {
  /** The agent of cases that name none. @default undefined */
  agent?: string | undefined;
  /** The time of cases without `at`, ms since the epoch. @default Date.now() */
  now?: number | undefined;
  /** The project file's per-server labels, added to every case's target labels (issue 42). @default none */
  serverLabels?: Readonly<Record<string, ServerLabels | undefined>> | undefined;
  /**
   * The set and context a case with a `caller` is decided with (the gateway's bindings, derived from `root`).
   * Without it such a case is decided against the policy itself, as for a gateway without bindings.
   */
  forCaller?:
    | ((
        caller: NonNullable<PolicyTestCase['caller']>,
        root: CapabilitySet,
      ) => { set: CapabilitySet; context: Pick<CheckContext, 'agent' | 'principal'> })
    | undefined;
}

/** The resource and action a case asks about. */
export function caseRequest(c: PolicyTestCase): { resource: string; action: string } {
  if (c.tool !== undefined) {
    const [, server = '', tool = ''] = EXPOSED_TOOL.exec(c.tool) ?? [];
    return { resource: resourceFor.tool(server, tool), action: c.action ?? 'execute' };
  }
  const resource = c.resource ?? '';
  const scheme = resource.slice(0, resource.indexOf(':'));
  return { resource, action: c.action ?? schemeActions(scheme)?.[0] ?? 'execute' };
}

/**
 * Runs every case against `policy` with a fresh capability set per run: `check` only, so no quota is consumed and
 * the order of the cases does not matter.
 */
export function runPolicyTests(
  policy: Policy,
  tests: PolicyTestFile,
  options: RunPolicyTestsOptions = {},
): PolicyTestReport {
  const now = options.now ?? Date.now();
  const set = CapabilitySet.fromPolicy(policy, {
    clock: () => now,
    onWarning: () => {},
    serverLabels: options.serverLabels,
  });
  const rules = set.rules;
  const matchers = rules.map((r) => ({ info: r, pattern: compilePattern(r.pattern) }));
  const decided = new Map<string, number>();
  const matched = new Map<string, number>();
  const results = tests.cases.map((c, index): PolicyTestResult => {
    const { resource, action } = caseRequest(c);
    const at = c.at === undefined ? now : Date.parse(c.at);
    const viaGateway =
      c.caller === undefined || options.forCaller === undefined
        ? undefined
        : options.forCaller(c.caller, set);
    const target = set.flowLabels.labelsFor(resource, c.annotations).all;
    const context: CheckContext = {
      args: c.arguments,
      agent: c.agent ?? options.agent,
      principal: c.principal,
      ...viaGateway?.context,
      annotations: c.annotations,
      now: at,
      labels: c.flow?.target === undefined ? target : [...new Set([...target, ...c.flow.target])],
      flow: caseFlow(c.flow),
    };
    const decision = (viaGateway?.set ?? set).check(resource, action, context);
    // A binding's rule may share an id with one of the policy: only the policy's own decisions count as decided.
    if (decision.ruleId !== undefined && viaGateway === undefined) {
      decided.set(decision.ruleId, (decided.get(decision.ruleId) ?? 0) + 1);
    }
    for (const { info, pattern } of matchers) {
      const live = info.expiresAt === undefined || at < info.expiresAt;
      const forAction = info.actions.includes('*') || info.actions.includes(action);
      if (live && forAction && matchPattern(pattern, resource))
        matched.set(info.id, (matched.get(info.id) ?? 0) + 1);
    }
    const passed = decision.effect === c.expect && (c.rule === undefined || decision.ruleId === c.rule);
    return {
      name: c.name,
      index,
      resource,
      action,
      passed,
      viaGateway: viaGateway !== undefined,
      expected: { effect: c.expect, rule: c.rule },
      actual: {
        effect: decision.effect,
        rule: decision.ruleId,
        reason: decision.reason,
        ...(decision.flow !== undefined ? { flow: decision.flow } : {}),
      },
    };
  });
  const coverage = rules.map(
    (r): RuleCoverage => ({
      id: r.id,
      effect: r.effect,
      pattern: r.pattern,
      decided: decided.get(r.id) ?? 0,
      matched: matched.get(r.id) ?? 0,
    }),
  );
  const failed = results.filter((r) => !r.passed).length;
  return {
    results,
    passed: results.length - failed,
    failed,
    coverage,
    unexercised: coverage.filter((r) => r.decided === 0 && r.matched === 0),
  };
}

/**
 * The session a case is decided in: its `seen` labels, and a provenance that answers what the case says its
 * arguments carry (a case states provenance, it does not reproduce the text).
 */
function caseFlow(flow: PolicyTestCase['flow']): FlowState {
  const carries = flow?.carries ?? [];
  const state = carries.length === 0 ? new FlowState() : new DeclaredFlow(carries);
  state.record('(policy test)', flow?.seen ?? []);
  for (const c of carries) state.record(c.source ?? '(policy test)', [c.label]);
  return state;
}

/** A flow state whose `carried` answers are a case's declared ones. */
class DeclaredFlow extends FlowState {
  readonly #carries: NonNullable<NonNullable<PolicyTestCase['flow']>['carries']>;

  constructor(carries: NonNullable<NonNullable<PolicyTestCase['flow']>['carries']>) {
    super();
    this.#carries = carries;
  }

  override carried(
    args: Readonly<Record<string, unknown>> | undefined,
    only?: readonly string[],
  ): CarriedAnswer {
    const carried = this.#carries
      .filter((c) => args !== undefined && Object.hasOwn(args, c.argument))
      .filter((c) => only === undefined || only.includes(c.label))
      .map((c) => ({ argument: c.argument, label: c.label, source: c.source ?? '(policy test)' }));
    return { carried, truncated: false };
  }
}
