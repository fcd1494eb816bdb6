/**
 * Issue 14, item 4: a value a variable expands into a stdio server's `args` is masked in everything the CLI prints,
 * here a failed server's stderr tail that echoes its arguments.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, SECRET, type TempProject, tempProject } from './helpers.js';

const projects: TempProject[] = [];
afterEach(() => {
  for (const p of projects.splice(0)) p.close();
});

describe('variables expanded into args', () => {
  it('are masked in a failed server stderr tail, in text and in --json', async () => {
    const p = tempProject();
    projects.push(p);
    p.write(
      'fails.mjs',
      'console.error(`bad arguments: ${process.argv.slice(2).join(" ")}`);\nprocess.exit(1);\n',
    );
    p.write('interlock.config.yaml', {
      mcpServers: {
        broken: {
          command: process.execPath,
          args: ['fails.mjs', '--api-token=${API_TOKEN}', '--db', 'postgres://app:${DB_PASSWORD}@db/app'],
        },
      },
      policy: { version: 1, rules: [] },
    });
    const env = { API_TOKEN: SECRET, DB_PASSWORD: 'hunter2-but-longer' };
    for (const args of [['servers'], ['servers', '--json'], ['tools', '--verbose']]) {
      const result = await runCli(args, { cwd: p.dir, env });
      const printed = `${result.stdout}\n${result.stderr}`;
      expect(printed, args.join(' ')).toContain('bad arguments');
      expect(printed, args.join(' ')).not.toContain(SECRET);
      expect(printed, args.join(' ')).not.toContain('hunter2-but-longer');
      expect(printed, args.join(' ')).toContain('--api-token=***');
    }
  });
});
