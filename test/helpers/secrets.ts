/**
 * Every secret a test helper creates or uses — access and refresh tokens, authorization codes,
 * PKCE verifiers, passwords — is remembered here, and every test server checks its own log lines
 * for all of them when it stops (test/helpers/server.ts). So the whole suite is a scan for secrets
 * in logs: a log line that ever carries one fails the test that produced it.
 */
const known = new Set<string>();

export function rememberSecret(...values: Array<string | undefined | null>): void {
  for (const value of values) if (value && value.length >= 8) known.add(value);
}

/** The remembered secrets that occur in `lines`, each with the first line it occurs in. */
export function leakedSecrets(lines: readonly string[]): Array<{ secret: string; line: string }> {
  const leaks: Array<{ secret: string; line: string }> = [];
  for (const secret of known) {
    const line = lines.find((l) => l.includes(secret));
    if (line) leaks.push({ secret: `${secret.slice(0, 6)}…`, line: line.slice(0, 300) });
  }
  return leaks;
}
