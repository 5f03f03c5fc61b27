/** HTTP plumbing shared by every mounted part: request ids, bounded body reading, REST errors. */
import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import { AppError, restErrorBody, toAppError } from './errors.js';
import type { Logger } from './log.js';

export interface PorticoState {
  requestId: string;
  /** The route template for metrics, set by whoever matched the request. */
  route?: string;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The token of an `Authorization: Bearer …` header (RFC 6750 §2.1; the scheme's name in any case,
 * RFC 9110 §11.1), undefined for anything else. Tokens in the query string are never read (MCP
 * authorization, "Token Requirements"): the MCP servers and the console API read them here alone.
 */
export function bearerToken(header: string | undefined): string | undefined {
  return /^Bearer[ ]+([A-Za-z0-9._~+/-]+=*)[ ]*$/i.exec(header ?? '')?.[1];
}

/** Accepts a caller's X-Request-Id when it is well formed, otherwise makes one. */
export function requestIdOf(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value && REQUEST_ID.test(value) ? value : randomUUID();
}

/**
 * Reads the body as text, refusing more than `limit` bytes (413) without buffering the excess.
 * Listens for the stream's events rather than iterating it: an async iterator per request was a
 * visible share of the MCP hot path (docs/performance.md item 9).
 */
export function readBody(ctx: Context, limit: number): Promise<string> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limit) return Promise.reject(new AppError('payload_too_large', `request body exceeds ${limit} bytes`));
  const req = ctx.req;
  // Nothing here decompresses: a compressed body read as text would fail as malformed, blaming the
  // sender's JSON for its coding (RFC 9110 §8.4: an unsupported coding is 415).
  const coding = req.headers['content-encoding'];
  if (coding !== undefined && coding.trim().toLowerCase() !== 'identity') {
    return Promise.reject(new AppError('unsupported_media_type', `Content-Encoding ${coding.slice(0, 40)} is not supported: send the body uncompressed`));
  }
  if (req.readableEnded) return Promise.resolve('');
  // Its client went away before the body was asked for (while its token was checked): the stream
  // has ended without 'end' and sends no event any more, so waiting for one would never answer.
  if (req.destroyed) return Promise.reject(clientGone());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (error: unknown, text?: string) => {
      req.off('data', onData).off('end', onEnd).off('error', onGone).off('close', onGone);
      if (error) reject(error);
      else resolve(text!);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      settle(new AppError('payload_too_large', `request body exceeds ${limit} bytes`));
      req.resume(); // the rest is read and dropped, so the connection stays usable for the answer
    };
    const onEnd = () => settle(undefined, (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)).toString('utf8'));
    // A client that went away before the end ('error': aborted, or a malformed chunk; 'close' covers the rest).
    const onGone = () => settle(clientGone());
    req.on('data', onData).on('end', onEnd).on('error', onGone).on('close', onGone);
  });
}

/** A client that went away before its body was complete: its doing, a 400 in the log and the metrics, not a server error. */
function clientGone(): AppError {
  return new AppError('invalid_request', 'the request ended before its body was complete');
}

/** Reads an application/x-www-form-urlencoded body (HTML forms). */
export async function readForm(ctx: Context, limit = 64 * 1024): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded')) throw new AppError('unsupported_media_type', 'expected a form submission');
  const text = await readBody(ctx, limit);
  if (text.includes('%00') || text.includes('\u0000')) throw nulRefused();
  return new URLSearchParams(text);
}

/**
 * Koa middleware: REST errors as `{ error: { code, message, request_id } }`. `translate` turns what a part threw into an AppError; the composition root passes the database's
 * translation, so a lost database is `unavailable` (503) rather than `internal` (shared/ knows no driver).
 */
export function restErrors(log: Logger, translate: (thrown: unknown) => AppError = toAppError) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
    } catch (thrown) {
      const error = translate(thrown);
      const requestId = (ctx.state as PorticoState).requestId;
      if (error.status >= 500) log.error('request failed', { request_id: requestId, err: thrown });
      ctx.status = error.status;
      if (error.headers) ctx.set(error.headers);
      if (error.code === 'rate_limited' && !ctx.response.get('Retry-After')) ctx.set('Retry-After', String(error.details?.retry_after ?? 1));
      ctx.body = restErrorBody(error, requestId);
    }
  };
}

/**
 * CORS for a public document (metadata, catalogs) that any origin may read: every answer, errors
 * included, carries `Access-Control-Allow-Origin: *`, and the preflight is answered here. MCP
 * clients send `MCP-Protocol-Version` on discovery, which makes even a GET preflighted (Fetch
 * standard, "CORS protocol"). No credentials mode: nothing here is read with a cookie.
 */
export function publicDocumentCors(ctx: Context, next: Next): Promise<unknown> | undefined {
  ctx.set('Access-Control-Allow-Origin', '*');
  if (ctx.method !== 'OPTIONS') return next();
  (ctx.state as PorticoState).route = 'cors.preflight';
  ctx.set({ 'Access-Control-Allow-Methods': 'GET, HEAD', 'Access-Control-Allow-Headers': 'mcp-protocol-version', 'Access-Control-Max-Age': '600' });
  ctx.status = 204;
  return undefined;
}

/** PostgreSQL cannot store or compare text holding U+0000, and no input here needs it (DESIGN.md §7: a clear 400). */
function nulRefused(): AppError {
  return new AppError('invalid_request', 'the request holds a U+0000 character, which is not accepted');
}

/** Refuses a request whose path or query holds U+0000 (`%00`) before any part reads it. */
export function refuseNul(ctx: Context, next: () => Promise<unknown>): Promise<unknown> {
  if (ctx.url.includes('%00') || ctx.url.includes('\u0000')) throw nulRefused();
  return next();
}
