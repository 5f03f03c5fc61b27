/**
 * node:util parseArgs for the operator CLI, with one refusal more: an option that takes one value,
 * given twice, is a UsageError naming it. parseArgs keeps the last value and drops the first
 * without a word (`user disable --email a --email b` would disable b alone), where a mistyped
 * command line must be refused, never half-read (as the console refuses a query parameter given twice).
 */
import { parseArgs as parseNodeArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './errors.js';

export function parseArgs<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseNodeArgs<T>> {
  // One parse: its tokens show what was repeated, and the rest is what parseArgs(config) returns.
  const { tokens, ...parsed } = parseNodeArgs({ ...config, tokens: true });
  const given = new Set<string>();
  for (const token of tokens ?? []) {
    if (token.kind !== 'option' || config.options?.[token.name]?.multiple) continue;
    if (given.has(token.name)) throw new UsageError(`--${token.name} may be given once`);
    given.add(token.name);
  }
  return parsed as ReturnType<typeof parseNodeArgs<T>>;
}

/**
 * The one positional argument of `command` (a tenant's slug, a client id), named `what` in the
 * usage error for none or more than one; `hint`, when given, says where to find one.
 */
export function onePositional(args: string[], command: string, what: string, hint?: string): string {
  const { positionals } = parseArgs({ args, options: {}, allowPositionals: true });
  return theOne(positionals, command, what, hint);
}

/** `positionals`' only member, parsed beside a command's options; the usage errors of onePositional. */
export function theOne(positionals: string[], command: string, what: string, hint?: string): string {
  if (positionals.length === 1) return positionals[0];
  throw new UsageError(positionals.length ? `${command} takes ${what}, got ${positionals.length} arguments` : `${command} needs ${what}${hint ? ` (${hint})` : ''}`);
}
