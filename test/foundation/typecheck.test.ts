import test from 'ava';
import { spawn } from 'node:child_process';

test('the whole project typechecks under strict TypeScript', async (t) => {
  t.timeout(180_000);
  const child = spawn(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--noEmit'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  t.is(code, 0, output.slice(0, 4000));
});
