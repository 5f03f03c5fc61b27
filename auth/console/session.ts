/**
 * The console's sign-in session. The cookie (signed, httpOnly, scoped to the console path) holds
 * only a random id; the session itself is a row of `console_sessions` keyed by the id's sha256,
 * so signing out ends it on the server and a copied cookie stops working. CSRF tokens are an
 * HMAC of the session id.
 */
import { createHmac, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import type { DbOrTrx } from '../../db/connect.js';
import { AppError } from '../../shared/errors.js';

const SESSION_COOKIE = 'portico_console';
const SESSION_TTL_MS = 12 * 3600_000;
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

export interface ConsoleSession {
  /** The random id the cookie carries; never stored. */
  id: string;
  userId: string;
  /** Chosen organization; absent until a person in several organizations picks one. */
  tenantId?: string;
  expiresAt: number;
}

interface DbConsoleSessionRow {
  id_hash: string;
  user_id: string;
  tenant_id: string | null;
  created_at: number;
  expires_at: number;
}

/** Whether the cookies are Secure is the request's (app.ts: the public URL decides). */
export interface SessionOptions {
  path: string;
  macKey: string;
}

function hashSessionId(id: string): string {
  return hash('sha256', id, 'base64url');
}

/**
 * Starts a session of 12 hours: 32 random bytes, of which the database keeps only the hash.
 * `expiresAt` keeps an earlier session's end (a new id for a chosen organization): the 12 hours
 * count from the sign-in, however often the person switches.
 */
export async function createSession(db: DbOrTrx, input: { userId: string; tenantId?: string; expiresAt?: number }): Promise<ConsoleSession> {
  const now = Date.now();
  const id = randomBytes(32).toString('base64url');
  const expiresAt = Math.min(input.expiresAt ?? Infinity, now + SESSION_TTL_MS);
  const row: DbConsoleSessionRow = { id_hash: hashSessionId(id), user_id: input.userId, tenant_id: input.tenantId ?? null, created_at: now, expires_at: expiresAt };
  await db<DbConsoleSessionRow>('console_sessions').insert(row);
  return { id, userId: input.userId, tenantId: input.tenantId, expiresAt: row.expires_at };
}

export async function findSession(db: DbOrTrx, id: string): Promise<ConsoleSession | undefined> {
  if (!SESSION_ID.test(id)) return undefined;
  const row = await db<DbConsoleSessionRow>('console_sessions').where({ id_hash: hashSessionId(id) }).andWhere('expires_at', '>', Date.now()).first();
  return row && { id, userId: row.user_id, tenantId: row.tenant_id ?? undefined, expiresAt: Number(row.expires_at) };
}

export async function deleteSession(db: DbOrTrx, id: string): Promise<void> {
  await db('console_sessions').where({ id_hash: hashSessionId(id) }).delete();
}

/** Expired rows are of no use to anyone; sign-in removes them so the table does not grow. */
export async function pruneExpiredSessions(db: DbOrTrx): Promise<number> {
  return db('console_sessions').where('expires_at', '<=', Date.now()).delete();
}

/**
 * The session id named by the cookie, unchecked: `findSession` decides whether it is live.
 * `oldKey`: its signature is by a cookie key that no longer signs (after `keys activate`). Koa's
 * cookies then queue a new signature, but at path "/" and without the cookie's attributes, which
 * the browser would send after the old one; the caller writes the cookie again instead
 * (writeSessionCookie replaces that queued header).
 */
export function sessionIdOf(ctx: Context): { id?: string; oldKey: boolean } {
  const id = ctx.cookies.get(SESSION_COOKIE, { signed: true }) || undefined;
  const queued = [ctx.response.get('Set-Cookie')].flat().map(String);
  return { id, oldKey: !!id && queued.some((header) => header.startsWith(`${SESSION_COOKIE}.sig=`)) };
}

export function writeSessionCookie(ctx: Context, options: SessionOptions, session: ConsoleSession): void {
  ctx.cookies.set(SESSION_COOKIE, session.id, {
    signed: true, httpOnly: true, sameSite: 'lax', path: options.path, maxAge: Math.max(0, session.expiresAt - Date.now()), overwrite: true,
  });
}

export function clearSessionCookie(ctx: Context, options: SessionOptions): void {
  ctx.cookies.set(SESSION_COOKIE, '', { signed: true, httpOnly: true, sameSite: 'lax', path: options.path, maxAge: 0, overwrite: true });
}

/** What a signed-in form's CSRF token is bound to. */
export function sessionBinding(session: ConsoleSession): string {
  return `session:${session.id}`;
}

/** Bound to the session (or, before sign-in, to a pre-session nonce cookie). */
export function csrfToken(macKey: string, binding: string): string {
  return createHmac('sha256', macKey).update(`console-csrf:${binding}`).digest('base64url');
}

/**
 * Refuses a state-changing form that did not come from our own page: a cross-site fetch
 * metadata header, a foreign Origin, or a missing or wrong token.
 */
/** Fetch metadata: a request another site started (its form, its link) is refused; our own pages' and a typed address pass. */
export function refuseCrossSite(ctx: Context, message: string): void {
  const site = ctx.get('sec-fetch-site');
  if (site && site !== 'same-origin' && site !== 'none') throw new AppError('csrf_failed', message);
}

export function checkCsrf(ctx: Context, macKey: string, binding: string, submitted: string | null, expectedOrigin: string): void {
  refuseCrossSite(ctx, 'cross-site form submissions are refused');
  const origin = ctx.get('origin');
  if (origin && origin !== 'null' && origin !== expectedOrigin) throw new AppError('csrf_failed', 'the form came from another site');
  const expected = Buffer.from(csrfToken(macKey, binding));
  const given = Buffer.from(submitted ?? '');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new AppError('csrf_failed', 'the form has expired or was not issued by this page; reload and try again');
  }
}
