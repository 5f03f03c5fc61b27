import fs from 'node:fs';
import path from 'node:path';

/**
 * The project's own folder, the nearest one above this file that holds package.json. It is the
 * same whether this file runs as TypeScript or as its compiled copy in dist/ (where the tests run).
 */
export const PROJECT_ROOT = nearestPackageDir(import.meta.dirname);

function nearestPackageDir(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${start}`);
  }
}
