/** The gateway identity guide's project file (docs/snippets/gateway-identity/) loads, with its secrets masked. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadInterlockConfig } from '../../src/config/load.js';
import { ROOT } from '../cli/helpers.js';

describe('gateway identity snippets', () => {
  it('interlock.config.yaml: both servers take the caller identity; the client secrets are secrets', async () => {
    const config = await loadInterlockConfig({
      file: 'interlock.config.yaml',
      cwd: join(ROOT, 'docs/snippets/gateway-identity'),
      env: {
        GATEWAY_CLIENT_SECRET: 'gateway-secret-from-env-0123',
        WIKI_CLIENT_SECRET: 'wiki-secret-from-env-0123',
      },
    });
    const auth = Object.fromEntries(
      config.servers.map((s) => [s.name, s.transport === 'stdio' ? undefined : s.auth]),
    );
    expect(auth.issues).toMatchObject({ type: 'token_exchange', maxConnections: 200, expirySkewMs: 30_000 });
    expect(auth.wiki).toMatchObject({ type: 'token_exchange', idJag: { clientId: 'interlock' } });
    expect(config.secrets).toEqual(
      expect.arrayContaining(['gateway-secret-from-env-0123', 'wiki-secret-from-env-0123']),
    );
  });
});
