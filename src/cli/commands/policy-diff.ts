/**
 * `interlock policy diff --against RECORDING [NEW_POLICY]` (issue 40, "replay before rollout"): every decision of a
 * recording (`audit.record`) decided again under a new policy, and the ones that would flip, grouped by rule and by
 * tool. NEW_POLICY is a policy file or a project file (its policy); without it, the project file's own policy (what
 * `interlock policy publish` would publish). The review hash it prints is what `publish --reviewed` asks for.
 */
import { relative, resolve } from 'node:path';
import { readConfigDocument } from '../../config/document.js';
import { type InterlockConfig, loadInterlockConfig, loadPolicyFile } from '../../config/load.js';
import { createMasker } from '../../config/secrets.js';
import { isJsonObject } from '../../json.js';
import type { Policy } from '../../security/policy.js';
import type { RecordedValue } from '../../security/recording.js';
import {
  type ReplayExample,
  type ReplayGroup,
  type ReplayReport,
  readRecording,
  replayRecording,
} from '../../security/replay.js';
import { UsageError } from '../exit.js';
import { type Printer, visible } from '../io.js';
import type { CommandContext } from '../project.js';

/** Options of `interlock policy diff`. */
export interface PolicyDiffOptions {
  /** The recording: default the project file's `audit.record.file`. */
  against?: string | undefined;
}

/** Hex digits of the review hash shown in commands; `publish --reviewed` takes 12 or more. */
const REVIEW_HASH_SHOWN = 12;

export async function policyDiffCommand(
  ctx: CommandContext,
  newPolicy: string | undefined,
  options: PolicyDiffOptions,
): Promise<number> {
  const { printer, io } = ctx;
  // The project file is read only when it supplies something: the recording or the policy.
  let project: InterlockConfig | undefined;
  const config = async () => {
    project ??= await loadInterlockConfig({ file: ctx.configFile, cwd: io.cwd, env: io.env });
    printer.setMask(createMasker(project.secrets));
    return project;
  };
  const recordingFile =
    options.against === undefined ? (await config()).recording?.file : resolve(io.cwd, options.against);
  if (recordingFile === undefined) {
    throw new UsageError(
      `interlock policy diff needs a recording: --against FILE, or audit.record.file in ${(await config()).file}.`,
    );
  }
  const { policy, source } =
    newPolicy === undefined
      ? await projectPolicy(await config())
      : await readPolicy(resolve(io.cwd, newPolicy), io.env, io.cwd);
  const report = replayRecording(await readRecording(recordingFile), policy);
  if (printer.json) printer.data({ policy: source, ...report });
  else printDiff(printer, report, source, io.cwd);
  return 0;
}

async function projectPolicy(config: InterlockConfig): Promise<{ policy: Policy; source: string }> {
  if (config.policy === undefined) throw new UsageError(`${config.file} has no policy to compare.`);
  return { policy: config.policy, source: config.policyFile ?? config.file };
}

/** A policy file (it has `rules`), or a project file whose policy is used. */
async function readPolicy(
  path: string,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): Promise<{ policy: Policy; source: string }> {
  const doc = await readConfigDocument(path, 'policy file');
  const data = doc.data;
  const project =
    isJsonObject(data) &&
    data.rules === undefined &&
    (data.mcpServers !== undefined || data.servers !== undefined || data.mcpConfig !== undefined);
  if (!project) return { policy: await loadPolicyFile(path, { env }), source: path };
  return projectPolicy(await loadInterlockConfig({ file: path, cwd, env }));
}

function printDiff(printer: Printer, report: ReplayReport, source: string, cwd: string): void {
  const shown = (file: string) => {
    const rel = relative(cwd, file);
    return rel.startsWith('..') ? file : rel;
  };
  const r = report.recording;
  printer.line(
    `Replayed ${r.records} decision${r.records === 1 ? '' : 's'} of ${shown(r.file)} (sha256 ${r.sha256.slice(0, 12)}) under ${shown(source)}:`,
  );
  const kinds = Object.entries(report.kinds)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');
  printer.line(
    `  ${report.unchanged} unchanged, ${report.flipped} flip${report.flipped === 1 ? '' : 's'}${kinds === '' ? '' : ` (${kinds})`}, ${report.undecidable} undecidable from the recording`,
  );
  section(printer, 'By rule (before → after):', report.byRule);
  section(printer, 'By tool:', report.byTool);
  section(
    printer,
    'Undecidable from the recording (the new policy reads arguments recorded only as digests; not counted as unchanged):',
    report.undecidableByTool,
  );
  printer.line();
  printer.line(`review hash: ${report.reviewHash}`);
  printer.line(
    printer.style(
      'dim',
      `  after review, publish this policy with: interlock policy publish --reviewed ${report.reviewHash.slice(0, REVIEW_HASH_SHOWN)}`,
    ),
  );
}

function section(printer: Printer, title: string, groups: readonly ReplayGroup[]): void {
  if (groups.length === 0) return;
  printer.line();
  printer.line(printer.style('bold', title));
  for (const g of groups) {
    const kinds = Object.entries(g.kinds)
      .map(([k, n]) => `${n} ${k}`)
      .join(', ');
    printer.line(`  ${visible(g.key)}  ${g.count}  (${kinds})`);
    for (const e of g.examples) printer.line(printer.style('dim', `    ${example(e)}`));
  }
}

function example(e: ReplayExample): string {
  const who = [e.agent, e.principal].filter((x) => x !== undefined).join('/');
  const args = Object.entries(e.args ?? {})
    .map(([k, v]) => `${k}=${argText(v)}`)
    .join(' ');
  const outcome = (o: { effect: string; ruleId?: string | undefined }) =>
    `${o.effect}${o.ruleId === undefined ? '' : ` (${o.ruleId})`}`;
  const change =
    e.to === undefined
      ? `${outcome(e.from)}; needs ${e.needs?.join(', ')}`
      : `${outcome(e.from)} → ${outcome(e.to)}`;
  return visible(
    `line ${e.line}  ${e.time}  ${who === '' ? '' : `${who}  `}${e.tool ?? e.resource}  ${args}${args === '' ? '' : '  '}${change}`,
  );
}

function argText(v: RecordedValue): string {
  if ('value' in v) {
    const text = JSON.stringify(v.value) ?? 'undefined';
    return text.length > 40 ? `${text.slice(0, 39)}…` : text;
  }
  return `<${v.type} ${v.digest.slice('hmac-sha256:'.length, 'hmac-sha256:'.length + 8)}>`;
}
