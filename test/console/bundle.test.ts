/**
 * What the console ships: at most 150 KB gzipped of JavaScript and CSS (the build prints the
 * figure and fails above it; this holds the built files to it), and sources that never put
 * data into the page as markup nor let message HTML run.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { describe, expect, test } from 'vitest';

const DIST = fileURLToPath(new URL('../../dist/console/', import.meta.url));
const SOURCES = fileURLToPath(new URL('../../console/', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : [join(dir, e.name)]));
}

describe('the console bundle', () => {
  test.skipIf(!existsSync(join(DIST, 'console.js')))('all of its JavaScript and CSS is at most 150 KB gzipped', () => {
    const files = readdirSync(DIST).filter((f) => /\.(js|css)$/.test(f));
    expect(files).toEqual(expect.arrayContaining(['console.js', 'console.css']));
    const total = files.reduce((sum, f) => sum + gzipSync(readFileSync(join(DIST, f)), { level: 9 }).length, 0);
    expect(total).toBeLessThanOrEqual(150 * 1024);
    // Nothing fetched at run time: no URL of another host in what the browser loads.
    for (const f of files) expect(readFileSync(join(DIST, f), 'utf8')).not.toMatch(/(src|href|url)\(?=?["']?https?:\/\/(?!www\.w3\.org)/);
  });

  test('no source sets markup from data or lets a message run scripts', () => {
    for (const file of sourceFiles(SOURCES)) {
      const text = readFileSync(file, 'utf8');
      expect(text, file).not.toMatch(/dangerouslySetInnerHTML|\.innerHTML\s*=|outerHTML|insertAdjacentHTML|document\.write/);
      expect(text, file).not.toMatch(/sandbox="[^"]*allow-(scripts|same-origin)/);
      expect(text, file).not.toMatch(/\beval\(|new Function\(/);
    }
  });
});
