import fs from 'node:fs';
import { pathToFileURL } from 'node:url';

/**
 * Whether the module at `moduleUrl` (its `import.meta.url`) is the script node was started with,
 * so that a CLI runs when started and not when a test imports it. Compared as real paths made
 * into URLs: node gives a module the URL of its real path, percent-encoded (`/opt/Acme%20Portico`),
 * while `process.argv[1]` is the path as typed, through any symbolic link (`/srv/portico/current`).
 */
export function isEntryPoint(moduleUrl: string): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return pathToFileURL(fs.realpathSync(script)).href === moduleUrl;
  } catch {
    return false;
  }
}
