/** The project's scripts (`npm run admin`, `npm run migrate`) as real processes, as an operator runs them. */
import { spawn } from 'node:child_process';

export interface ScriptResult {
  code: number | null;
  stdout: string;
  /** The lines of stderr, without oidc-provider's warning about Node 20. */
  stderr: string[];
}

/** Runs `script` (a path from the project's root) through tsx with `env` added, writing `stdin` to it if given. */
export async function runScript(script: string, args: readonly string[], env: Record<string, string>, stdin?: string): Promise<ScriptResult> {
  const child = spawn(process.execPath, ['--import=tsx', script, ...args], { env: { ...process.env, ...env }, stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
  if (stdin !== undefined) child.stdin!.end(stdin);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr: stderr.split('\n').filter((line) => line && !line.startsWith('oidc-provider WARNING')) };
}
