/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
/**
 * The console's panels (issue 41), each a function of data the console gathered: servers and their health, each
 * principal's tools with the deciding rule, live decisions, tools blocked by a changed definition, the shared
 * policy, quota use. A panel without a data source in this deployment says so.
 */
import type { Child } from 'hono/jsx';
import type { BlockedToolChange } from '../../interop/catalog-reporter.js';
import type { ServerHealth } from '../../interop/connection-registry.js';
import type { Policy } from '../../security/policy.js';
import type { AuditRecord } from '../../security/types.js';
import type { FeedEntry, FeedFilter } from './feed.js';
import { Csrf, Flash, NoSource, Page, type PageContext } from './layout.js';

export interface Notice {
  done?: string | undefined;
  error?: string | undefined;
}

export function ServersPanel(props: {
  ctx: PageContext;
  health: Record<string, ServerHealth>;
  blocked: number;
}) {
  const rows = Object.entries(props.health);
  return (
    <Page ctx={props.ctx} title="Servers" current="servers">
      {props.blocked > 0 ? (
        <p class="notice" role="status">
          {props.blocked} tool{props.blocked === 1 ? ' is' : 's are'} blocked by a changed definition:{' '}
          <a href={`${props.ctx.base}/blocked`}>review</a>.
        </p>
      ) : null}
      {rows.length === 0 ? (
        <NoSource>The gateway has no upstream servers.</NoSource>
      ) : (
        <table>
          <caption class="note">
            Upstream servers and their health, as the gateway's /readyz sees them
          </caption>
          <thead>
            <tr>
              <th scope="col">Server</th>
              <th scope="col">State</th>
              <th scope="col">Since</th>
              <th scope="col">Transport</th>
              <th scope="col">Protocol</th>
              <th scope="col">Calls</th>
              <th scope="col">Errors</th>
              <th scope="col">Denied</th>
              <th scope="col">p50 / p95 ms</th>
              <th scope="col">Last error</th>
            </tr>
          </thead>
          <tbody>
            {rows.map(([name, h]) => (
              <tr>
                <th scope="row">{name}</th>
                <td>{h.state}</td>
                <td>{h.since}</td>
                <td>{h.transport}</td>
                <td>{h.protocolVersion ?? '—'}</td>
                <td>{h.calls}</td>
                <td>{h.errors}</td>
                <td>{h.denied}</td>
                <td>
                  {ms(h.latencyMs.p50)} / {ms(h.latencyMs.p95)}
                </td>
                <td>
                  {h.lastError === undefined ? '—' : `${h.lastError.code ?? ''} ${h.lastError.message}`}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Page>
  );
}

function ms(value: number | undefined): string {
  return value === undefined ? '—' : value.toFixed(1);
}

/** One binding of `gateway.principals`, as the principals panel lists it. */
export interface BindingView {
  readonly index: number;
  readonly match: string;
  readonly rules: readonly string[];
}

/** One tool's decision for the principal asked about. */
export interface ToolDecisionView {
  readonly name: string;
  readonly effect: string;
  readonly ruleId: string | undefined;
  readonly reason: string;
  readonly blocked: boolean;
}

export function ToolsPanel(props: {
  ctx: PageContext;
  methods: readonly string[];
  bindings: readonly BindingView[] | undefined;
  query: { method: string; subject: string; groups: string };
  matched: readonly number[] | undefined;
  tools: readonly ToolDecisionView[] | undefined;
}) {
  const { ctx, query } = props;
  return (
    <Page ctx={ctx} title="Principals and tools" current="tools">
      {props.bindings === undefined ? (
        <p>
          The gateway has no <code>gateway.principals</code> bindings: every authenticated caller gets the
          whole project policy.
        </p>
      ) : (
        <table>
          <caption class="note">Bindings of gateway.principals, in order</caption>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Matches</th>
              <th scope="col">Rules</th>
            </tr>
          </thead>
          <tbody>
            {props.bindings.map((b) => (
              <tr>
                <td>{b.index}</td>
                <td>
                  <code>{b.match}</code>
                </td>
                <td>{b.rules.join(', ') || '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h3>A principal's tools</h3>
      <form method="get" action={`${ctx.base}/tools`} class="filters">
        <label>
          Authenticated with
          <select name="method">
            {props.methods.map((m) => (
              <option value={m} selected={m === query.method}>
                {m}
              </option>
            ))}
          </select>
        </label>
        <label>
          Subject
          <input name="subject" value={query.subject} required />
        </label>
        <label>
          Groups (comma-separated)
          <input name="groups" value={query.groups} />
        </label>
        <button type="submit">Show tools</button>
      </form>
      {props.tools === undefined ? null : (
        <>
          <p>
            <strong>{query.subject}</strong> ({query.method}) matches{' '}
            {props.matched === undefined
              ? 'every caller (no bindings)'
              : props.matched.length === 0
                ? 'no binding: it sees no tool'
                : `binding${props.matched.length === 1 ? '' : 's'} ${props.matched.join(', ')}`}
            .
          </p>
          <table>
            <caption class="note">
              Each tool's decision for this principal, and the rule that decides it
            </caption>
            <thead>
              <tr>
                <th scope="col">Tool</th>
                <th scope="col">Decision</th>
                <th scope="col">Deciding rule</th>
                <th scope="col">Why</th>
              </tr>
            </thead>
            <tbody>
              {props.tools.map((t) => (
                <tr>
                  <th scope="row">
                    <code>{t.name}</code>
                  </th>
                  <td class={`effect-${t.blocked ? 'deny' : t.effect}`}>
                    {t.blocked ? 'blocked (changed definition)' : t.effect}
                  </td>
                  <td>{t.ruleId ?? '— (no rule: default deny)'}</td>
                  <td>{t.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </Page>
  );
}

/** One decision as a table row (the live view's rows, and each event of its stream). */
export function DecisionRow(props: { entry: FeedEntry }) {
  const r: AuditRecord = props.entry.record;
  const name = r.server === undefined || r.tool === undefined ? r.resource : `mcp__${r.server}__${r.tool}`;
  return (
    <tr>
      <td>{r.time}</td>
      <td>{r.principal ?? '—'}</td>
      <td>
        <code>{name}</code>
      </td>
      <td>{r.action}</td>
      <td class={`effect-${r.allowed ? 'allow' : r.effect}`}>
        {r.allowed ? 'allowed' : `denied (${r.effect})`}
      </td>
      <td>{r.ruleId ?? '—'}</td>
      <td>{r.reason}</td>
    </tr>
  );
}

export function LivePanel(props: {
  ctx: PageContext;
  filter: FeedFilter;
  entries: readonly FeedEntry[];
  eventsUrl: string;
}) {
  const { ctx, filter } = props;
  return (
    <Page ctx={ctx} title="Live decisions" current="live">
      <form method="get" action={`${ctx.base}/live`} class="filters">
        <label>
          Principal
          <input name="principal" value={filter.principal ?? ''} />
        </label>
        <label>
          Tool
          <input name="tool" value={filter.tool ?? ''} />
        </label>
        <label>
          Rule id
          <input name="rule" value={filter.rule ?? ''} />
        </label>
        <button type="submit">Filter</button>
      </form>
      <p id="live-status" role="status" class="note">
        connecting…
      </p>
      <div hx-ext="sse" sse-connect={props.eventsUrl}>
        <table>
          <caption class="note">Decisions of the gateway's audit stream, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Principal</th>
              <th scope="col">Tool or resource</th>
              <th scope="col">Action</th>
              <th scope="col">Decision</th>
              <th scope="col">Rule</th>
              <th scope="col">Reason</th>
            </tr>
          </thead>
          <tbody id="decisions" sse-swap="decision" hx-swap="afterbegin">
            {props.entries.map((entry) => (
              <DecisionRow entry={entry} />
            ))}
          </tbody>
        </table>
      </div>
    </Page>
  );
}

export function BlockedPanel(props: {
  ctx: PageContext;
  blocked: readonly BlockedToolChange[];
  notice: Notice;
}) {
  const { ctx } = props;
  return (
    <Page ctx={ctx} title="Blocked tools" current="blocked">
      <Flash {...props.notice} />
      {props.blocked.length === 0 ? (
        <p>No tool is blocked: every tool's definition is the one pinned.</p>
      ) : (
        props.blocked.map((b) => (
          <section aria-labelledby={`blocked-${b.name}`}>
            <h3 id={`blocked-${b.name}`}>
              <code>{b.name}</code>
            </h3>
            <p>
              Server <strong>{b.server}</strong> changed the definition of <code>{b.tool}</code>: pinned{' '}
              <code>{b.pinnedHash.slice(0, 12)}</code>, now <code>{b.currentHash.slice(0, 12)}</code>. Calls
              are refused until the change is approved.
            </p>
            <pre class="diff">
              {b.diff.map((line) => (
                <span class={line.startsWith('-') ? 'del' : line.startsWith('+') ? 'add' : undefined}>
                  {`${line}\n`}
                </span>
              ))}
            </pre>
            <form method="post" action={`${ctx.base}/blocked/approve`}>
              <Csrf ctx={ctx} />
              <input type="hidden" name="name" value={b.name} />
              <input type="hidden" name="hash" value={b.currentHash} />
              <button type="submit">Approve this definition ({b.currentHash.slice(0, 12)})</button>
            </form>
          </section>
        ))
      )}
    </Page>
  );
}

export function PolicyPanel(props: {
  ctx: PageContext;
  shared: { version: number; fenced: boolean; policy: Policy | undefined } | undefined;
  notice: Notice;
  /** The publish section, when the gateway can publish the project file's policy. */
  publish?: Child | undefined;
}) {
  const { ctx, shared } = props;
  return (
    <Page ctx={ctx} title="Shared policy" current="policy">
      <Flash {...props.notice} />
      {shared === undefined ? (
        <NoSource>
          This gateway shares no policy (no <code>state.policy</code>): its policy is the project file's.
        </NoSource>
      ) : (
        <>
          <p>
            Version <strong>{shared.version}</strong>
            {shared.fenced ? ' — not confirmed in the store: every call is refused until it is.' : '.'}{' '}
            Publish a new version {props.publish === undefined ? 'with ' : 'below or with '}
            <code>interlock policy publish</code> (both run the policy tests and the review check first).
          </p>
          <table>
            <caption class="note">Rules of the shared policy's current version</caption>
            <thead>
              <tr>
                <th scope="col">Id</th>
                <th scope="col">Effect</th>
                <th scope="col">Resource</th>
                <th scope="col">Actions</th>
                <th scope="col">Revoke</th>
              </tr>
            </thead>
            <tbody>
              {(shared.policy?.rules ?? []).map((rule) => (
                <tr>
                  <th scope="row">{rule.id ?? '—'}</th>
                  <td>{rule.effect}</td>
                  <td>
                    <code>{rule.resource}</code>
                  </td>
                  <td>{[rule.actions].flat().join(', ')}</td>
                  <td>
                    {rule.id === undefined ? (
                      <span class="note">no id</span>
                    ) : (
                      <form method="post" action={`${ctx.base}/policy/revoke`} class="inline">
                        <Csrf ctx={ctx} />
                        <input type="hidden" name="rule" value={rule.id} />
                        <button type="submit" aria-label={`Revoke rule ${rule.id}`}>
                          Revoke
                        </button>
                      </form>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {props.publish}
        </>
      )}
    </Page>
  );
}

/** One quota's use. */
export interface QuotaView {
  readonly scope: string;
  readonly ruleId: string;
  /** Undefined when this process does not count the rule's use (the fleet's store does). */
  readonly used: number | undefined;
  readonly maxCalls: number;
  readonly per: string | undefined;
}

export function QuotaPanel(props: {
  ctx: PageContext;
  quotas: readonly QuotaView[];
  fleet: boolean;
  /** With the fleet's store: the counters it holds for the principals the console knows of. */
  fleetQuotas?: readonly QuotaView[] | undefined;
  /** The principal the operator asked about. */
  asked?: string | undefined;
}) {
  const { ctx } = props;
  return (
    <Page ctx={ctx} title="Quotas" current="quota">
      {props.quotas.length === 0 ? (
        <NoSource>No rule of this gateway's policy has a maxCalls quota.</NoSource>
      ) : (
        <QuotaTable
          caption={
            props.fleet
              ? 'Quota rules of the sets this replica has built, per rule and principal; use counted in the fleet’s store is below'
              : 'Quota use counted in this process, per rule and principal'
          }
          quotas={props.quotas}
        />
      )}
      {props.fleetQuotas === undefined ? null : (
        <section aria-labelledby="fleet-quota-title">
          <h2 id="fleet-quota-title">The fleet's counts</h2>
          <form method="get" action={`${ctx.base}/quota`} class="filters">
            <label>
              Principal
              <input type="text" name="principal" value={props.asked ?? ''} size={30} />
            </label>{' '}
            <button type="submit">Show</button>
          </form>
          {props.fleetQuotas.length === 0 ? (
            <p class="note">No quota use in the fleet's store for the principals this console has seen.</p>
          ) : (
            <QuotaTable
              caption="Quota use the fleet's store holds, for every gateway process (leased units not yet spent included)"
              quotas={props.fleetQuotas}
            />
          )}
        </section>
      )}
    </Page>
  );
}

function QuotaTable(props: { caption: string; quotas: readonly QuotaView[] }) {
  return (
    <table>
      <caption class="note">{props.caption}</caption>
      <thead>
        <tr>
          <th scope="col">Principal or binding</th>
          <th scope="col">Rule</th>
          <th scope="col">Used</th>
          <th scope="col">Limit</th>
          <th scope="col">Window</th>
        </tr>
      </thead>
      <tbody>
        {props.quotas.map((q) => (
          <tr>
            <td>{q.scope}</td>
            <td>{q.ruleId}</td>
            <td>{q.used ?? 'in the fleet’s store'}</td>
            <td>{q.maxCalls}</td>
            <td>{q.per ?? 'no window'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
