/**
 * The demo's sample policy: notes may be listed and read, written only under `drafts/`, never deleted;
 * forecasts only for three cities; nothing else (weather alerts fall to default deny).
 */
import type { Policy } from '../../security/policy.js';

export const DEMO_POLICY: Policy = {
  version: 1,
  rules: [
    { id: 'notes-list', effect: 'allow', resource: 'mcp:notes:list_notes', actions: 'execute' },
    { id: 'notes-read', effect: 'allow', resource: 'mcp:notes:read_*', actions: 'execute' },
    {
      id: 'notes-write-drafts',
      effect: 'allow',
      resource: 'mcp:notes:write_note',
      actions: 'execute',
      description: 'agents may only write drafts',
      when: { args: { id: { startsWith: 'drafts/' } } },
    },
    {
      id: 'no-deletes',
      effect: 'deny',
      resource: 'mcp:notes:delete_*',
      actions: '*',
      description: 'no agent deletes notes',
    },
    {
      id: 'forecast-cities',
      effect: 'allow',
      resource: 'mcp:weather:get_forecast',
      actions: 'execute',
      description: 'forecasts for the three office cities',
      when: { args: { city: { oneOf: ['Berlin', 'Lisbon', 'Oslo'] } } },
    },
  ],
};
