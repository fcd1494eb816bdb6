/**
 * The publisher `interlock serve` gives the gateway's operator console (issue 41): it reads the project file
 * again on every preview and publish (the policy on disk, not the one the gateway started with) and runs exactly
 * the checks of `interlock policy publish` (policy-publish.ts) before the shared policy gets a new version.
 */
import { type InterlockConfig, loadInterlockConfig } from '../config/load.js';
import { PolicyReviewError } from '../errors.js';
import type { ConsolePublisher, PublishPreview } from '../gateway/console/publish.js';
import { policyHash } from '../gateway/console/publish.js';
import type { SharedPolicy } from '../state/shared-policy.js';
import { UsageError } from './exit.js';
import { checkReview, refuseFailedTests, runPublishTests } from './policy-publish.js';

/** Where the project file is: its path (absolute, as the project loaded it), the working directory, the environment. */
export interface PublisherSource {
  file: string;
  cwd: string;
  env: NodeJS.ProcessEnv | Record<string, string | undefined>;
}

export function consolePublisher(source: PublisherSource, shared: SharedPolicy): ConsolePublisher {
  const load = (): Promise<InterlockConfig> =>
    loadInterlockConfig({ file: source.file, cwd: source.cwd, env: source.env });
  return {
    async preview(): Promise<PublishPreview> {
      let config: InterlockConfig;
      try {
        config = await load();
      } catch (err) {
        return {
          hash: policyHash(undefined),
          policy: undefined,
          requireReview: false,
          problem: messageOf(err),
        };
      }
      const base = {
        hash: policyHash(config.policy),
        policy: config.policy,
        requireReview: config.state?.policy?.requireReview === true,
      };
      try {
        const run = await runPublishTests(config);
        if (run === undefined) return base;
        const failed = run.report.results.filter((r) => !r.passed).map((r) => r.name);
        return { ...base, tests: { file: run.file, passed: run.report.passed, failed } };
      } catch (err) {
        return { ...base, problem: `the policy tests cannot be run: ${messageOf(err)}` };
      }
    },

    async publish(hash: string, reviewed: string | undefined): Promise<number> {
      const config = await load();
      const policy = config.policy;
      if (policy === undefined) throw new UsageError(`${config.file} has no policy to publish.`);
      if (policyHash(policy) !== hash) {
        throw new PolicyReviewError(
          'mismatch',
          `Policy ${hash.slice(0, 12)} was not published: the policy in ${config.file} changed since it was shown (it is now ${policyHash(policy).slice(0, 12)}).`,
          { operatorHint: 'reload the policy panel, review the policy it shows, and publish that' },
        );
      }
      const run = await runPublishTests(config);
      if (run !== undefined) refuseFailedTests(config, run);
      if (config.state?.policy?.requireReview === true) {
        await checkReview(config, policy, { reviewed }, source.cwd);
      }
      return shared.publish(policy);
    },
  };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
