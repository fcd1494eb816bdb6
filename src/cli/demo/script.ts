/**
 * What the demo's agent does, as a script: each turn is what a scripted model answers (a line of text and
 * one tool call). Today the demo plays the calls through the manager itself; with the engine's scripted
 * model the same turns become the model's replies and the agent loop makes the calls, through the same gate.
 */

/** One turn of the scripted agent. */
export interface ScriptedTurn {
  /** What this turn shows. */
  title: string;
  /** The tool call the model makes: the exposed tool name and its arguments. */
  call: { name: string; arguments: Record<string, unknown> };
}

export const DEMO_SCRIPT: readonly ScriptedTurn[] = Object.freeze([
  {
    title: 'An allowed call (stdio server)',
    call: { name: 'mcp__notes__list_notes', arguments: {} },
  },
  {
    title: 'An allowed call (Streamable HTTP server)',
    call: { name: 'mcp__weather__get_forecast', arguments: { city: 'Lisbon' } },
  },
  {
    title: 'A denied call: an explicit deny rule',
    call: { name: 'mcp__notes__delete_note', arguments: { id: 'team/roadmap' } },
  },
  {
    title: 'An argument constraint: writing outside drafts/',
    call: { name: 'mcp__notes__write_note', arguments: { id: 'team/roadmap', text: 'rewritten' } },
  },
  {
    title: 'The same tool with an allowed argument',
    call: { name: 'mcp__notes__write_note', arguments: { id: 'drafts/idea', text: 'gate every call' } },
  },
  {
    title: 'An argument constraint: a city outside the list',
    call: { name: 'mcp__weather__get_forecast', arguments: { city: 'Atlantis' } },
  },
  {
    title: 'A tool no rule grants (default deny)',
    call: { name: 'mcp__weather__set_alert', arguments: { phone: '+100', city: 'Oslo' } },
  },
]);
