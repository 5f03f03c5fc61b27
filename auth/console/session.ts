/**
 * The console's sign-in session: a signed, httpOnly cookie scoped to the console path, holding
 * who signed in, for which organization, until when. CSRF tokens are an HMAC of that session.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { AppError } from '../../shared/errors.js';

export const SESSION_COOKIE = 'portico_console';
const SESSION_TTL_MS = 12 * 3600_000;

export interface ConsoleSession {
  userId: string;
  /** Chosen organization; absent until a person in several organizations picks one. */
  tenantId?: string;
  expiresAt: number;
}

export interface SessionOptions {
  path: string;
  secure: boolean;
  macKey: string;
}

export function readSession(ctx: Context, options: SessionOptions): ConsoleSession | undefined {
  const raw = ctx.cookies.get(SESSION_COOKIE, { signed: true });
  if (!raw) return undefined;
  try {
    const session = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as ConsoleSession;
    if (typeof session.userId !== 'string' || typeof session.expiresAt !== 'number' || session.expiresAt < Date.now()) return undefined;
    return session;
  } catch {
    return undefined;
  }
}

export function writeSession(ctx: Context, options: SessionOptions, session: Omit<ConsoleSession, 'expiresAt'>): void {
  const value: ConsoleSession = { ...session, expiresAt: Date.now() + SESSION_TTL_MS };
  ctx.cookies.set(SESSION_COOKIE, Buffer.from(JSON.stringify(value)).toString('base64url'), {
    signed: true, httpOnly: true, sameSite: 'lax', secure: options.secure, path: options.path, maxAge: SESSION_TTL_MS, overwrite: true,
  });
}

export function clearSession(ctx: Context, options: SessionOptions): void {
  ctx.cookies.set(SESSION_COOKIE, '', { signed: true, httpOnly: true, sameSite: 'lax', secure: options.secure, path: options.path, maxAge: 0, overwrite: true });
}

/** Bound to the session (or, before sign-in, to a pre-session nonce cookie). */
export function csrfToken(macKey: string, binding: string): string {
  return createHmac('sha256', macKey).update(`console-csrf:${binding}`).digest('base64url');
}

/**
 * Refuses a state-changing form that did not come from our own page: a cross-site fetch
 * metadata header, a foreign Origin, or a missing or wrong token.
 */
export function checkCsrf(ctx: Context, macKey: string, binding: string, submitted: string | null, expectedOrigin: string): void {
  const site = ctx.get('sec-fetch-site');
  if (site && site !== 'same-origin' && site !== 'none') throw new AppError('csrf_failed', 'cross-site form submissions are refused');
  const origin = ctx.get('origin');
  if (origin && origin !== 'null' && origin !== expectedOrigin) throw new AppError('csrf_failed', 'the form came from another site');
  const expected = Buffer.from(csrfToken(macKey, binding));
  const given = Buffer.from(submitted ?? '');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new AppError('csrf_failed', 'the form has expired or was not issued by this page; reload and try again');
  }
}
