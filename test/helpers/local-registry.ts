/**
 * An npm registry on 127.0.0.1 for the tests that run documented `npx` lines as a user outside this repository
 * would: it serves our packed tarball as `mcp-interlock`, and every package this repository's lockfile installed,
 * packed from node_modules, so `npx` installs from it with no network. Anything else answers 404, and every name
 * asked for is recorded: a test can show that `npx` never looked up the registry's unrelated `interlock`.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

interface Version {
  /** The package's folder (its package.json is the manifest). */
  dir: string;
  /** A tarball to serve instead of packing the folder. */
  tarball?: string;
}

/** Orders release versions (`1.10.0` after `1.9.2`); a pre-release sorts before its release. */
function byVersion(a: string, b: string): number {
  const parts = (v: string) => v.split(/[-+]/)[0]!.split('.').map(Number);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0);
  return Number(!a.includes('-')) - Number(!b.includes('-'));
}

export interface LocalRegistry extends AsyncDisposable {
  /** The registry URL, with its trailing slash, for `npm_config_registry`. */
  readonly url: string;
  /** The package names asked for, in order (a name asked for twice appears twice). */
  readonly asked: string[];
  close(): Promise<void>;
}

/** Packs a package folder as npm does (`package/` prefix), leaving out its nested node_modules. */
function packFolder(dir: string): Buffer {
  const result = spawnSync(
    'tar',
    ['-czf', '-', '-C', dir, '--exclude=./node_modules', '--transform=s,^\\.,package,', '.'],
    { maxBuffer: 256 * 1024 * 1024 },
  );
  if (result.status !== 0) throw new Error(`tar of ${dir} failed: ${result.stderr.toString()}`);
  return result.stdout;
}

/**
 * Starts the registry. `root` is the repository (its package-lock.json lists what to serve); `ours` is the
 * path of `npm pack`'s tarball of it.
 */
export async function startLocalRegistry(root: string, ours: string): Promise<LocalRegistry> {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string; link?: boolean }>;
  };
  const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  const packages = new Map<string, Map<string, Version>>();
  const add = (name: string, version: string, where: Version) => {
    const versions = packages.get(name) ?? new Map<string, Version>();
    if (!versions.has(version)) versions.set(version, where);
    packages.set(name, versions);
  };
  add(own.name, own.version, { dir: root, tarball: ours });
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.link === true || entry.version === undefined) continue;
    const dir = join(root, path);
    if (!existsSync(join(dir, 'package.json'))) continue; // an optional package for another platform
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    add(name, entry.version, { dir });
  }

  const tarballs = new Map<string, Buffer>();
  const asked: string[] = [];
  let base = '';

  function packument(name: string): unknown {
    const versions: Record<string, unknown> = {};
    for (const [version, where] of packages.get(name) ?? []) {
      const file = `${name.replace('/', '__')}-${version}.tgz`;
      let bytes = tarballs.get(file);
      if (bytes === undefined) {
        bytes = where.tarball === undefined ? packFolder(where.dir) : readFileSync(where.tarball);
        tarballs.set(file, bytes);
      }
      const manifest = JSON.parse(readFileSync(join(where.dir, 'package.json'), 'utf8')) as object;
      versions[version] = {
        ...manifest,
        name,
        version,
        dist: {
          tarball: `${base}-/${file}`,
          integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}`,
          shasum: createHash('sha1').update(bytes).digest('hex'),
        },
      };
    }
    const latest = Object.keys(versions).sort(byVersion).at(-1);
    return { name, 'dist-tags': latest === undefined ? {} : { latest }, versions };
  }

  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname).slice(1);
    if (path.startsWith('-/')) {
      const bytes = tarballs.get(path.slice(2));
      if (bytes === undefined) res.writeHead(404).end();
      else res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(bytes);
      return;
    }
    asked.push(path);
    if (!packages.has(path)) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(packument(path)));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const close = () =>
    new Promise<void>((done) => {
      server.closeAllConnections();
      server.close(() => done());
    });
  return { url: base, asked, close, [Symbol.asyncDispose]: close };
}
