/**
 * `interlock policy test [--file F]`: runs the policy tests written beside the project file
 * (`interlock.policy-tests.yaml`) against the project's policy, through the capability set's own `check` (no server
 * connects, no quota is used, nothing is audited). Prints each failure with the expected and the actual decision and
 * the deciding rule, which rules no case exercised, and a summary line; exits 4 when a case fails.
 */
import { dirname, resolve } from 'node:path';
import { readConfigDocument } from '../../config/document.js';
import { withoutConsequences as dedupe, explainIssue, fileError } from '../../config/file-issues.js';
import { keysAt } from '../../config/keys.js';
import { type InterlockConfig, loadInterlockConfig } from '../../config/load.js';
import { createMasker } from '../../config/secrets.js';
import { ConfigError, type DecisionFlow } from '../../errors.js';
import { serverLabelsOf } from '../../security/flow-labels.js';
import { display } from '../../security/pattern.js';
import { POLICY_VERSION } from '../../security/policy.js';
import {
  DEFAULT_POLICY_TESTS_FILE,
  type PolicyTestFile,
  type PolicyTestReport,
  type PolicyTestResult,
  policyTestSchemas,
  type RuleCoverage,
  type RunPolicyTestsOptions,
  runPolicyTests,
} from '../../security/policy-tests.js';
import { toConfigIssues } from '../../zod-issues.js';
import { ExitCode, HintedError } from '../exit.js';
import { visible } from '../io.js';
import type { CommandContext } from '../project.js';

/** The agent the gateway's calls are made as (`gateway.ts`). */
export const GATEWAY_AGENT = 'gateway';

export interface PolicyTestOptions {
  /** `--file`: the tests file. @default interlock.policy-tests.yaml beside the project file */
  file?: string | undefined;
}

/** Loads the project file alone (no server, no Redis) and masks its secrets in everything printed. */
export async function loadProjectConfig(ctx: CommandContext): Promise<InterlockConfig> {
  const config = await loadInterlockConfig({ file: ctx.configFile, cwd: ctx.io.cwd, env: ctx.io.env });
  ctx.printer.setMask(createMasker(config.secrets.flatMap((s) => [s, JSON.stringify(s).slice(1, -1)])));
  if (config.policy === undefined) {
    ctx.printer.warn(`${config.file} has no policy: every request is denied.`);
  }
  return config;
}

/** Runs a tests file against the project file's own policy (gateway callers through its `gateway.principals`). */
export async function runProjectPolicyTests(
  config: InterlockConfig,
  tests: PolicyTestFile,
): Promise<PolicyTestReport> {
  const policy = config.policy ?? { version: POLICY_VERSION, rules: [] };
  const gateway = tests.cases.some((c) => c.caller !== undefined) ? await gatewayCallers(config) : undefined;
  return runPolicyTests(policy, tests, {
    agent: config.agent,
    forCaller: gateway,
    serverLabels: serverLabelsOf(config.servers),
  });
}

/** Reads and validates a tests file: a `ConfigError` names the case and field of each problem, with its line. */
export async function loadPolicyTests(path: string, shown: string): Promise<PolicyTestFile> {
  const doc = await readConfigDocument(path, 'policy tests file', shown);
  const schema = policyTestSchemas().file;
  const result = schema.safeParse(doc.data);
  if (result.success) return result.data;
  const issues = toConfigIssues(result.error).map((i) => explainIssue(i, doc, (p) => keysAt(schema, p)));
  throw fileError('policy tests file', doc.file, dedupe(issues));
}

export async function policyTestCommand(ctx: CommandContext, options: PolicyTestOptions): Promise<number> {
  const config = await loadProjectConfig(ctx);
  const path =
    options.file === undefined
      ? resolve(dirname(config.file), DEFAULT_POLICY_TESTS_FILE)
      : resolve(ctx.io.cwd, options.file);
  const tests = await loadPolicyTests(path, options.file ?? path).catch((err: unknown) => {
    const missing = err instanceof ConfigError && err.issues.some((i) => i.path === '(file)');
    throw missing && options.file === undefined
      ? new HintedError(
          err,
          `write the cases in ${DEFAULT_POLICY_TESTS_FILE} beside ${config.file}, or name the file with --file`,
        )
      : err;
  });
  const report = await runProjectPolicyTests(config, tests);
  const exitCode = report.failed === 0 ? ExitCode.OK : ExitCode.CHECK_FAILED;
  const { printer } = ctx;
  if (printer.json) {
    printer.data({
      file: path,
      policyFile: config.policyFile ?? null,
      passed: report.passed,
      failed: report.failed,
      cases: report.results.map((r) => ({
        name: r.name,
        resource: r.resource,
        action: r.action,
        passed: r.passed,
        expected: { effect: r.expected.effect, rule: r.expected.rule ?? null },
        actual: {
          effect: r.actual.effect,
          rule: r.actual.rule ?? null,
          reason: r.actual.reason,
          ...(r.actual.flow !== undefined ? { flow: r.actual.flow } : {}),
        },
      })),
      coverage: {
        rules: report.coverage.length,
        exercised: report.coverage.length - report.unexercised.length,
        unexercised: report.unexercised.map((r) => r.id),
        byRule: report.coverage,
      },
    });
    return exitCode;
  }
  for (const result of report.results) {
    printer.line(
      result.passed
        ? `${printer.style('green', 'PASS')}  ${visible(result.name)}`
        : `${printer.style('red', 'FAIL')}  ${visible(result.name)}`,
    );
    if (!result.passed) for (const line of failureLines(result, report)) printer.line(`      ${line}`);
  }
  printer.line();
  printer.line(coverageLine(report));
  for (const rule of report.unexercised) {
    printer.line(`  ${printer.style('yellow', 'not exercised')}  ${ruleText(rule)}`);
  }
  const summary = `${report.results.length} case${report.results.length === 1 ? '' : 's'}: ${report.passed} passed, ${report.failed} failed`;
  printer.line(printer.style(report.failed === 0 ? 'green' : 'red', summary));
  return exitCode;
}

/** What a failed case expected and got, and the deciding rule. */
function failureLines(result: PolicyTestResult, report: PolicyTestReport): string[] {
  const { expected, actual } = result;
  // A caller's rules include its bindings', which coverage does not list.
  const known = (id: string) => result.viaGateway || report.coverage.some((r) => r.id === id);
  const wanted =
    expected.rule === undefined
      ? expected.effect
      : `${expected.effect} by rule '${expected.rule}'${known(expected.rule) ? '' : ' (the policy has no rule with this id)'}`;
  const got = actual.rule === undefined ? actual.effect : `${actual.effect} by rule '${actual.rule}'`;
  return [
    `request   '${display(result.action)}' on '${display(result.resource)}'`,
    `expected  ${wanted}`,
    `actual    ${got}`,
    `reason    ${visible(actual.reason)}`,
    ...(actual.flow === undefined ? [] : [`flow      ${visible(flowText(actual.flow))}`]),
  ];
}

/** The flow a decision was made on, in one line: the labels seen, the target's, and what the arguments carried. */
function flowText(flow: DecisionFlow): string {
  const parts: string[] = [];
  parts.push(flow.labels.length === 0 ? 'no named label seen' : `seen ${flow.labels.join(', ')}`);
  if (flow.target !== undefined) parts.push(`target ${flow.target.join(', ') || '(none of the named)'}`);
  for (const c of flow.carried) parts.push(`argument '${c.argument}' carries ${c.label} from ${c.source}`);
  if (flow.truncated === true) parts.push('provenance index full');
  return parts.join('; ');
}

/**
 * How `interlock serve` decides for a caller: the set of the `gateway.principals` bindings it matches (derived
 * from the policy; none matched: nothing allowed), its calls made by the agent `gateway` for the caller's subject.
 */
async function gatewayCallers(config: InterlockConfig): Promise<RunPolicyTestsOptions['forCaller']> {
  const { PrincipalPolicies } = await import('../../gateway/bindings.js');
  const { shorthandMethod } = await import('../../config/gateway.js');
  const via = { jwt: 'jwt', apiKey: 'api-key', mtls: 'mtls', stdio: 'stdio' } as const;
  let policies: InstanceType<typeof PrincipalPolicies> | undefined;
  return (caller, root) => {
    // Built once, on the set the cases run against: a binding wider than the policy is refused here, as at start.
    policies ??= new PrincipalPolicies(
      root,
      config.gateway?.principals,
      config.gateway === undefined ? undefined : shorthandMethod(config.gateway),
    );
    const set = policies.capabilitiesFor({
      subject: caller.subject,
      clientId: caller.clientId,
      groups: caller.groups ?? [],
      scopes: caller.scopes ?? [],
      via: via[caller.method],
    });
    return { set, context: { agent: GATEWAY_AGENT, principal: caller.subject } };
  };
}

function coverageLine(report: PolicyTestReport): string {
  const total = report.coverage.length;
  const exercised = total - report.unexercised.length;
  return `coverage: ${exercised} of ${total} rule${total === 1 ? '' : 's'} exercised (decided or matched by a case)`;
}

function ruleText(rule: RuleCoverage): string {
  return `'${rule.id}' (${rule.effect} ${display(rule.pattern)})`;
}
