/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
/**
 * The policy panel's publish section (issue 41): the project file's policy as it is on disk, its hash, the rules a
 * publish adds, removes and changes, the policy tests' result, and a publish button bound to the hash shown.
 */
import { Csrf, type PageContext } from './layout.js';
import type { PolicyChanges, PublishPreview } from './publish.js';

export function PublishSection(props: { ctx: PageContext; preview: PublishPreview; changes: PolicyChanges }) {
  const { ctx, preview, changes } = props;
  const tests = preview.tests;
  const failing = tests !== undefined && tests.failed.length > 0;
  return (
    <section aria-labelledby="publish-title">
      <h2 id="publish-title">Publish the project file's policy</h2>
      {preview.problem !== undefined ? (
        <p class="notice error" role="alert">
          Nothing can be published: {preview.problem}
        </p>
      ) : preview.policy === undefined ? (
        <p class="notice">The project file has no policy to publish.</p>
      ) : (
        <>
          <p>
            Policy in the project file: hash <code class="publish-hash">{preview.hash.slice(0, 12)}</code>,{' '}
            {preview.policy.rules.length} rule{preview.policy.rules.length === 1 ? '' : 's'}.
          </p>
          <table>
            <caption class="note">What a publish changes against the shared policy's current version</caption>
            <tbody>
              <ChangeRow label="Rules added" ids={changes.added} />
              <ChangeRow label="Rules removed" ids={changes.removed} />
              <ChangeRow label="Rules changed" ids={changes.changed} />
            </tbody>
          </table>
          <p class={failing ? 'notice error' : 'note'}>
            {tests === undefined
              ? 'Policy tests: the project has no tests file.'
              : failing
                ? `Policy tests: ${tests.failed.length} failed (${tests.failed.join(', ')}), ${tests.passed} passed; a publish is refused until they pass.`
                : `Policy tests: ${tests.passed} passed (${tests.file}).`}
          </p>
          <form method="post" action={`${ctx.base}/policy/publish`}>
            <Csrf ctx={ctx} />
            <input type="hidden" name="hash" value={preview.hash} />
            {preview.requireReview ? (
              <label>
                Review hash (printed by <code>interlock policy diff</code>)
                <input type="text" name="reviewed" autocomplete="off" size={20} required />
              </label>
            ) : null}{' '}
            <button type="submit" aria-label={`Publish policy ${preview.hash.slice(0, 12)}`}>
              Publish
            </button>
          </form>
        </>
      )}
    </section>
  );
}

function ChangeRow(props: { label: string; ids: readonly string[] }) {
  return (
    <tr>
      <th scope="row">{props.label}</th>
      <td>{props.ids.length === 0 ? 'none' : props.ids.join(', ')}</td>
    </tr>
  );
}
