/**
 * Files only their owner may read (tokens, pins): written atomically through a temporary file created exclusively
 * under a random name (so nothing planted at a guessable path, such as a symlink, can receive the content), and
 * read only when the file is a regular file, not a symlink, and not readable by group or others.
 */
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ConfigError } from './errors.js';

/**
 * Writes `text` to `path` with mode 0600: a new temporary file beside it (`wx`, random name), fsync, rename.
 * The directory is created with mode 0700 when missing. On failure the temporary file is removed.
 */
export async function writePrivateFile(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.${randomUUID()}.tmp`;
  try {
    const handle = await open(tmp, 'wx', 0o600);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}

/**
 * Reads a file that must be private: `undefined` when it does not exist. Throws `ConfigError` (naming `what` and
 * the fix) when it is a symlink, not a regular file, or readable or writable by group or others. Opened with
 * `O_NOFOLLOW` and checked on the open handle, so the file checked is the file read.
 */
export async function readPrivateFile(path: string, what: string): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') {
      throw new ConfigError(
        `Refused to read ${what} '${path}': it is a symbolic link. Replace it with a regular file (or delete it to start over).`,
        { file: path, cause: err },
      );
    }
    throw err;
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) {
      throw new ConfigError(`Refused to read ${what} '${path}': it is not a regular file.`, { file: path });
    }
    if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0) {
      const mode = (stat.mode & 0o777).toString(8).padStart(3, '0');
      throw new ConfigError(
        `Refused to read ${what} '${path}': its mode is ${mode}, so others on this machine may read or change it. Run 'chmod 600 ${path}' if its content is yours, or delete it to sign in again.`,
        { file: path },
      );
    }
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}
