/**
 * The console's bundle, served from dist/console/ (scripts/build-console.js writes it
 * at `npm run build`). Public files: code and styles, no data.
 */
import { createReadStream, existsSync, statSync } from 'node:fs';
import type http from 'node:http';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * dist/console of this package: found from this module's file upwards (the source
 * file in tests, dist/amsg.cjs when built), or AMSG_CONSOLE_ASSETS.
 */
export function assetsDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AMSG_CONSOLE_ASSETS) return resolve(env.AMSG_CONSOLE_ASSETS);
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'bin', 'amsg.js'))) return join(dir, 'dist', 'console');
    const up = dirname(dir);
    if (up === dir) return join(dirname(fileURLToPath(import.meta.url)), 'console');
    dir = up;
  }
}

/** Answers `/ui/assets/<name>`: the file, a 304, or a 404 text. */
export function serveAsset(req: http.IncomingMessage, res: http.ServerResponse, dir: string, name: string) {
  const notFound = (why: string) => {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' });
    res.end(why);
  };
  let decoded: string;
  try {
    decoded = decodeURIComponent(name);
  } catch {
    return notFound('not found');
  }
  // Plain names and sub-folders only: nothing that could leave the folder.
  if (
    !decoded ||
    decoded.includes('\\') ||
    decoded.includes('\0') ||
    decoded.split('/').some((part) => part === '' || part.startsWith('.'))
  )
    return notFound('not found');
  const file = resolve(dir, decoded);
  if (!file.startsWith(dir + sep)) return notFound('not found');
  let stat: ReturnType<typeof statSync> | undefined;
  try {
    stat = statSync(file);
  } catch {
    stat = undefined;
  }
  if (!stat?.isFile())
    return notFound(
      existsSync(join(dir, 'console.js'))
        ? 'not found'
        : `the console's bundle is not built (no ${join(dir, 'console.js')}): run npm run build`,
    );
  const etag = `"${stat.size.toString(36)}-${Math.floor(stat.mtimeMs).toString(36)}"`;
  const headers = {
    'content-type': TYPES[file.slice(file.lastIndexOf('.'))] ?? 'application/octet-stream',
    'cache-control': 'no-cache',
    etag,
    'x-content-type-options': 'nosniff',
  };
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, headers);
    return void res.end();
  }
  res.writeHead(200, { ...headers, 'content-length': stat.size });
  if (req.method === 'HEAD') return void res.end();
  createReadStream(file)
    .on('error', () => res.destroy())
    .pipe(res);
}
