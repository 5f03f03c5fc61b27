/**
 * A refresh repeated inside the grace window gets the first refresh's answer (checklist D3).
 *
 * An MCP client refreshes once per refused call: two tool calls in parallel when the access token
 * expires are two refreshes with the same refresh token (the MCP SDK does this,
 * test/clients/sdk_journeys_short/sdk_parallel_refresh.ts); a retry after a lost response is another. Rotation
 * lets one of them win the atomic consume (adapter.ts). The other was refused `invalid_grant`,
 * and a client answers that by forgetting its tokens and sending the person to sign in and
 * consent again, which leaves a second connection behind.
 *
 * Now the winner leaves its answer on the rotated token's row, sealed with a key derived from
 * that refresh token, and a repeat — the same client, from the same address, with the same
 * parameters, inside the grace window — gets the same answer: the same tokens, so there is still
 * one chain. The stored answer opens only with the rotated refresh token, which the database holds
 * hashed, so a read of the database still yields no usable token; it is erased when the window
 * is over (a timer, and the purge for a process that stopped first: forgetAnswers). A repeat that differs in any of these is refused as before,
 * and a reuse after the window still revokes the grant.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Db, DbOrTrx } from '../db/connect.js';
import { hashTokenId } from '../db/grant_store.js';
import type { Logger } from '../shared/log.js';

/** How long a repeat waits for the winner's answer to be stored (the winner is mid-request). */
const WAIT_FOR_ANSWER_MS = 5_000;
const POLL_MS = 20;

interface SealedAnswer {
  /** Digest of what a repeat must match: client, address, scope and resources asked for. */
  request: string;
  /** When the winner answered (ms), to count `expires_in` down for a later repeat. */
  at: number;
  body: Record<string, unknown>;
}

type TokenContext = KoaContextWithOIDC;

/** Provider middleware (provider.use): stores winners' answers, answers repeats with them. */
export function refreshRepeats(db: Db, graceMs: number, log: Logger) {
  return async (ctx: TokenContext, next: () => Promise<void>): Promise<void> => {
    await next();
    const refreshToken = rotatedToken(ctx);
    if (!refreshToken || graceMs <= 0) return;
    const body = ctx.body as Record<string, unknown> | undefined;
    if (ctx.status === 200 && body && typeof body.refresh_token === 'string' && body.refresh_token !== refreshToken) {
      try {
        await remember(db, refreshToken, { request: requestDigest(ctx), at: Date.now(), body });
      } catch (err) {
        log.warn('storing a refresh answer for its repeats failed; a parallel refresh will be refused', { err, request_id: ctx.state?.requestId });
        return;
      }
      // A process that stops first leaves it to the purge (forgetAnswers).
      setTimeout(() => void forgetAnswer(db, refreshToken).catch(() => undefined), graceMs).unref();
      return;
    }
    if (ctx.status === 400 && body?.error === 'invalid_grant') {
      // The refusal stands when the answer cannot be read: an error here would leave the OAuth
      // error shape (RFC 6749 §5.2) for Portico's own.
      const answer = await answerOf(db, refreshToken, ctx, graceMs).catch((err: unknown) => {
        log.warn('a repeated refresh could not read the first refresh\'s answer; it is refused', { err, request_id: ctx.state?.requestId });
        return undefined;
      });
      if (!answer) return;
      ctx.status = 200;
      ctx.body = { ...answer.body, ...countedDown(answer) };
      ctx.set('Cache-Control', 'no-store');
      log.info('a repeated refresh got the first refresh\'s answer', { request_id: ctx.state?.requestId, client_id: ctx.oidc.client?.clientId });
    }
  };
}

/** The refresh token a token-endpoint request presented for a refresh_token grant. */
function rotatedToken(ctx: TokenContext): string | undefined {
  if (ctx.oidc?.route !== 'token') return undefined;
  const params = ctx.oidc.params as Record<string, unknown> | undefined;
  return params?.grant_type === 'refresh_token' && typeof params.refresh_token === 'string' ? params.refresh_token : undefined;
}

/** What two requests must share to be one refresh sent twice. */
function requestDigest(ctx: TokenContext): string {
  const params = ctx.oidc.params as Record<string, unknown>;
  const resources = [params.resource ?? []].flat().map(String).sort();
  return createHash('sha256').update(JSON.stringify([ctx.oidc.client?.clientId ?? null, ctx.ip, params.scope ?? null, resources])).digest('base64url');
}

/**
 * Erases the answers whose grace window is over (the purge runs it). Each opens with its rotated
 * refresh token and holds the next one, whose row holds the one after: kept for the row's life, an
 * old refresh token and a copy of the database would open the chain link by link, up to the live
 * token. The rows themselves stay: their consumption is what detects a reuse.
 */
export async function forgetAnswers(db: DbOrTrx, graceMs: number, now = Date.now()): Promise<number> {
  return db('oidc_payloads').where({ model: 'RefreshToken' }).whereNotNull('successor').where('consumed_at', '<=', now - graceMs).update({ successor: null });
}

async function forgetAnswer(db: Db, refreshToken: string): Promise<void> {
  await db('oidc_payloads').where({ model: 'RefreshToken', id: hashTokenId(refreshToken) }).update({ successor: null });
}

async function remember(db: Db, refreshToken: string, answer: SealedAnswer): Promise<void> {
  const id = hashTokenId(refreshToken);
  await db('oidc_payloads').where({ model: 'RefreshToken', id }).update({ successor: seal(refreshToken, id, answer) });
}

/**
 * The winner's answer for a refused refresh that repeats it, waiting while the winner is still at
 * work; undefined when the refusal was anything else (an unknown, expired or foreign token, a
 * reuse after the window, different parameters) or the winner never answered.
 */
async function answerOf(db: Db, refreshToken: string, ctx: TokenContext, graceMs: number): Promise<SealedAnswer | undefined> {
  const id = hashTokenId(refreshToken);
  const clientId = ctx.oidc.client?.clientId;
  const deadline = Date.now() + WAIT_FOR_ANSWER_MS;
  for (;;) {
    const row = await db('oidc_payloads').where({ model: 'RefreshToken', id }).first('client_id', 'consumed_at', 'successor');
    if (!row || row.consumed_at === null || row.client_id !== clientId || Date.now() - Number(row.consumed_at) >= graceMs) return undefined;
    if (row.successor) {
      const answer = open(refreshToken, id, row.successor);
      return answer?.request === requestDigest(ctx) ? answer : undefined;
    }
    if (Date.now() >= deadline) return undefined;
    await sleep(POLL_MS);
  }
}

/** The access token's remaining lifetime, for a repeat answered after the winner. */
function countedDown(answer: SealedAnswer): { expires_in?: number } {
  const expiresIn = answer.body.expires_in;
  if (typeof expiresIn !== 'number') return {};
  return { expires_in: Math.max(0, expiresIn - Math.floor((Date.now() - answer.at) / 1000)) };
}

/** AES-256-GCM under a key derived from the rotated refresh token, bound to its row. */
function keyOf(refreshToken: string): Buffer {
  return Buffer.from(hkdfSync('sha256', refreshToken, Buffer.alloc(0), 'portico refresh answer', 32));
}

function seal(refreshToken: string, id: string, answer: SealedAnswer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(refreshToken), iv).setAAD(Buffer.from(id));
  const sealed = Buffer.concat([cipher.update(JSON.stringify(answer), 'utf8'), cipher.final()]);
  return ['v1', iv, sealed, cipher.getAuthTag()].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
}

function open(refreshToken: string, id: string, stored: string): SealedAnswer | undefined {
  const [version, iv, sealed, tag] = stored.split('.');
  if (version !== 'v1' || !iv || !sealed || !tag) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyOf(refreshToken), Buffer.from(iv, 'base64url')).setAAD(Buffer.from(id));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return JSON.parse(Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8')) as SealedAnswer;
  } catch {
    return undefined;
  }
}
