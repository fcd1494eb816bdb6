/**
 * The console's static files (issue 41): htmx 2 and its SSE extension from the package's own dependencies
 * (resolved in node_modules, so they ship with the package; no CDN), and one small stylesheet and script of the
 * console's own, kept here as text so the build needs no step to copy them. Each is served with its type and
 * `nosniff`; the Content-Security-Policy allows scripts and styles from the console's own origin only.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** The console's stylesheet: readable tables, visible focus, no framework. */
const CONSOLE_CSS = `
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #fff; --muted: #57606a; --line: #d0d7de;
  --accent: #0b5cad; --deny: #b42318; --allow: #1a7f37; --ask: #9a6700; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --line: #30363d;
  --accent: #4493f8; --deny: #f85149; --allow: #3fb950; --ask: #d29922; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; padding: .6rem 1rem;
  border-bottom: 1px solid var(--line); }
header h1 { font-size: 1.05rem; margin: 0; }
nav ul { display: flex; flex-wrap: wrap; gap: .9rem; list-style: none; margin: 0; padding: 0; }
nav a[aria-current="page"] { font-weight: 700; text-decoration: underline; }
a { color: var(--accent); }
main { padding: 1rem; max-width: 78rem; }
.who { margin-left: auto; display: flex; gap: .6rem; align-items: center; color: var(--muted); }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1.2rem; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; }
code, pre { font-family: ui-monospace, monospace; font-size: .9em; }
pre.diff { padding: .5rem; border: 1px solid var(--line); overflow-x: auto; max-height: 24rem; }
.del { color: var(--deny); } .add { color: var(--allow); }
.effect-allow { color: var(--allow); } .effect-deny, .effect-default-deny { color: var(--deny); }
.effect-ask { color: var(--ask); }
.note { color: var(--muted); }
.notice { border-left: 4px solid var(--accent); padding: .4rem .8rem; margin: .5rem 0; }
.error { border-left-color: var(--deny); }
form.inline { display: inline; }
form.filters { display: flex; flex-wrap: wrap; gap: .8rem; align-items: end; }
label { display: flex; flex-direction: column; font-size: .9rem; }
input, select, textarea, button { font: inherit; }
button { padding: .25rem .8rem; cursor: pointer; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
`;

/** The console's script: says whether the live view is connected (htmx's SSE events), nothing else. */
const CONSOLE_JS = `
document.addEventListener('htmx:sseOpen', function () { setStatus('connected: new decisions appear at the top'); });
document.addEventListener('htmx:sseError', function () { setStatus('disconnected: retrying'); });
function setStatus(text) {
  var status = document.getElementById('live-status');
  if (status) status.textContent = text;
}
`;

const require = createRequire(import.meta.url);

/** One static file of the console: its body and content type. */
export interface ConsoleAsset {
  readonly body: string;
  readonly type: string;
}

let loaded: ReadonlyMap<string, ConsoleAsset> | undefined;

/** The console's static files by name (read once, on the first request for one). */
export function consoleAssets(): ReadonlyMap<string, ConsoleAsset> {
  loaded ??= new Map([
    [
      'htmx.min.js',
      { body: readDependency(require.resolve('htmx.org/dist/htmx.min.js')), type: 'text/javascript' },
    ],
    [
      'sse.min.js',
      { body: readDependency(require.resolve('htmx-ext-sse/dist/sse.min.js')), type: 'text/javascript' },
    ],
    ['console.css', { body: CONSOLE_CSS, type: 'text/css' }],
    ['console.js', { body: CONSOLE_JS, type: 'text/javascript' }],
  ]);
  return loaded;
}

/** A dependency's file, resolved where it is written (literal specifiers, so dependency checks see them). */
function readDependency(path: string): string {
  return readFileSync(path, 'utf8');
}
