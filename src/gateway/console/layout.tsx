/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
/**
 * The console's page frame (issue 41): server-rendered HTML with hono/jsx, no inline script or style (the
 * Content-Security-Policy forbids both), htmx configured by a `<meta>` so it injects no style of its own and
 * evaluates no text as code.
 */
import type { Child } from 'hono/jsx';

/** What every page knows about the request it answers. */
export interface PageContext {
  /** Where the console is mounted: `''` on a listener of its own, else e.g. `/console`. */
  readonly base: string;
  /** The signed-in operator, or `undefined` on a loopback console without sign-in. */
  readonly operator: string | undefined;
  /** The session's CSRF token: every form that changes something carries it. */
  readonly csrf: string | undefined;
  /** Whether the console asks nobody to sign in (loopback, gateway without auth). */
  readonly open: boolean;
}

const PANELS = [
  ['servers', 'Servers'],
  ['tools', 'Principals and tools'],
  ['live', 'Live decisions'],
  ['blocked', 'Blocked tools'],
  ['policy', 'Shared policy'],
  ['quota', 'Quotas'],
] as const;

export type PanelName = (typeof PANELS)[number][0];

const HTMX_CONFIG = JSON.stringify({
  includeIndicatorStyles: false,
  allowEval: false,
  allowScriptTags: false,
  selfRequestsOnly: true,
});

/** The document around one panel. */
export function Page(props: {
  ctx: PageContext;
  title: string;
  current?: PanelName | undefined;
  children?: Child;
}) {
  const { ctx } = props;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="htmx-config" content={HTMX_CONFIG} />
        {ctx.csrf === undefined ? null : <meta name="console-csrf" content={ctx.csrf} />}
        <title>{`${props.title} · Interlock console`}</title>
        <link rel="stylesheet" href={`${ctx.base}/assets/console.css`} />
        <script src={`${ctx.base}/assets/htmx.min.js`} defer />
        <script src={`${ctx.base}/assets/sse.min.js`} defer />
        <script src={`${ctx.base}/assets/console.js`} defer />
      </head>
      <body>
        <header>
          <h1>Interlock console</h1>
          {props.current === undefined ? null : (
            <nav aria-label="Panels">
              <ul>
                {PANELS.map(([name, label]) => (
                  <li>
                    <a
                      href={`${ctx.base}/${name}`}
                      aria-current={name === props.current ? 'page' : undefined}
                    >
                      {label}
                    </a>
                  </li>
                ))}
              </ul>
            </nav>
          )}
          <Who ctx={ctx} />
        </header>
        <main>
          <h2>{props.title}</h2>
          {props.children}
        </main>
      </body>
    </html>
  );
}

function Who(props: { ctx: PageContext }) {
  const { ctx } = props;
  if (ctx.open) {
    return (
      <p class="who">
        Open on loopback: the gateway has no authentication, so this console asks nobody to sign in.
      </p>
    );
  }
  if (ctx.operator === undefined || ctx.csrf === undefined) return null;
  return (
    <div class="who">
      <span>
        Signed in as <strong>{ctx.operator}</strong>
      </span>
      <form method="post" action={`${ctx.base}/signout`} class="inline">
        <input type="hidden" name="_csrf" value={ctx.csrf} />
        <button type="submit">Sign out</button>
      </form>
    </div>
  );
}

/** A hidden CSRF field, for every form that changes something. */
export function Csrf(props: { ctx: PageContext }) {
  return <input type="hidden" name="_csrf" value={props.ctx.csrf ?? ''} />;
}

/** A panel whose data source this deployment does not have. */
export function NoSource(props: { children?: Child }) {
  return <p class="notice">{props.children}</p>;
}

/** A message after an action (from the `done` or `error` query parameter of the redirect). */
export function Flash(props: { done?: string | undefined; error?: string | undefined }) {
  if (props.error !== undefined) {
    return (
      <p class="notice error" role="alert">
        {props.error}
      </p>
    );
  }
  if (props.done !== undefined) {
    return (
      <p class="notice" role="status">
        {props.done}
      </p>
    );
  }
  return null;
}

/** The sign-in page: one credential of the gateway's (an API key or a JWT access token). */
export function SignIn(props: { ctx: PageContext; error?: string | undefined; mtls: boolean }) {
  const { ctx } = props;
  return (
    <Page ctx={ctx} title="Sign in">
      <Flash error={props.error} />
      <p>
        Sign in with the credential you use for the gateway: an API key or a JWT access token. Only the
        operators named in <code>gateway.operators</code> may use the console.
      </p>
      <form method="post" action={`${ctx.base}/signin`}>
        <label>
          API key or access token
          <input type="password" name="credential" autocomplete="off" required={!props.mtls} size={60} />
        </label>
        <p>
          <button type="submit">Sign in</button>
        </p>
        {props.mtls ? (
          <p class="note">With a client certificate, leave the field empty: the certificate names you.</p>
        ) : null}
      </form>
    </Page>
  );
}
