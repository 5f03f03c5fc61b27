/**
 * Live MCP sessions of this instance. A session belongs to the connection (grant) and the user
 * that initialised it; a session id presented with anyone else's token is treated as unknown
 * (404), never served (MCP security best practices, "Session Hijacking"). Sessions end on idle
 * time-out (never while a request is in flight or its client listens on its GET stream), on
 * revocation of their connection, when the connection, or the person across all their
 * connections, opens more than the cap (the least recently used goes, one with nothing in flight
 * first), and on shutdown.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { AppError } from '../shared/errors.js';
import type { Cancellation } from './cancellation.js';

export interface Session {
  id: string;
  product: string;
  connectionId: string;
  userId: string;
  server: Server;
  transport: WebStandardStreamableHTTPServerTransport;
  /**
   * When its last request arrived or was answered, or its GET stream ended (the idle time-out and
   * the caps' least recently used count from it).
   */
  lastActiveAt: number;
  /**
   * The GET streams its client listens on (one at a time, but one that has just ended may still be
   * being written out when the next opens): while any is open the session is in use, however long
   * it has been since a request.
   */
  listening?: number;
  /** Closes the standalone GET stream when the token it was opened with expires. */
  streamExpiry?: NodeJS.Timeout;
  /** The stored id of that token: its revocation (RFC 7009) closes the stream too. */
  streamTokenId?: string;
  /**
   * The JSON-RPC ids of the requests this session is handling, from their arrival until they are
   * answered: a request under one of them is refused (ids are unique among those in flight).
   */
  requestIds: Set<string | number>;
  /** Requests the host answers itself, by JSON-RPC id: aborted by notifications/cancelled or when the session closes. */
  inflight: Map<string | number, DirectCall>;
  /** Requests the SDK's handlers run (an elicited confirmation), by JSON-RPC id. */
  sdkCalls: Map<string | number, SdkCall>;
}

/** A request the host answers itself. */
export interface DirectCall {
  cancellation: Cancellation;
  /** Settles once the pipeline has ended the call (its audit record is queued or durable). */
  answered: Promise<unknown>;
}

/** A request one of the SDK's handlers runs. */
interface SdkCall {
  /** Follows the SDK's signal of the request; the session's close aborts it with its answer. */
  cancellation: Cancellation;
  /** The request's reply, once the pipeline has ended the call (its audit record is durable). */
  reply: Promise<JSONRPCMessage>;
}

export class SessionRegistry {
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly options: { idleMs: number; maxPerConnection: number; maxPerUser: number }) {
    this.sweeper = setInterval(() => this.closeIdle(), Math.max(250, Math.min(options.idleMs / 4, 60_000)));
    this.sweeper.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /** The session, only if it belongs to this connection, user and product. */
  find(id: string, owner: { product: string; connectionId: string; userId: string }): Session | undefined {
    const session = this.sessions.get(id);
    if (!session || session.product !== owner.product || session.connectionId !== owner.connectionId || session.userId !== owner.userId) return undefined;
    session.lastActiveAt = Date.now();
    return session;
  }

  /**
   * Registers a new session. Over a cap, the least recently used sessions go: the connection's,
   * then the person's across their connections (each consent is a connection, so the connection
   * cap alone would let one person hold any number of sessions). Sessions with nothing in flight
   * go before those with a call running, whose calls would be cut off. The new session never
   * goes: requests of the others made while the SDK handled its initialize must not make it the
   * one that goes, handing its client an id that answers 404.
   */
  add(session: Session): void {
    session.lastActiveAt = Date.now();
    this.sessions.set(session.id, session);
    this.closeOver(session, (s) => s.connectionId === session.connectionId, this.options.maxPerConnection);
    this.closeOver(session, (s) => s.userId === session.userId, this.options.maxPerUser);
  }

  private closeOver(added: Session, belongs: (s: Session) => boolean, cap: number): void {
    const now = Date.now();
    const others = [...this.sessions.values()].filter((s) => s !== added && belongs(s))
      .sort((a, b) => Number(busy(a)) - Number(busy(b)) || activeAt(a, now) - activeAt(b, now));
    for (const old of others.slice(0, Math.max(0, others.length + 1 - cap))) void this.close(old.id);
  }

  /**
   * The session is gone (closed here, or terminated by its client's DELETE, which closes its
   * transport): the calls the host answers itself are cancelled, as the SDK cancels its own.
   */
  forget(id: string): void {
    const session = this.sessions.get(id);
    if (session?.streamExpiry) clearTimeout(session.streamExpiry);
    this.sessions.delete(id);
    for (const { cancellation } of session?.inflight.values() ?? []) cancellation.abort();
  }

  /**
   * Closes a session. With `answer`, the calls in flight end with it, not as cancelled, and are
   * audited so before they are answered (DESIGN.md §6): those the host answers itself reply when
   * their pipeline is done, and those the SDK runs are answered here once theirs is, before the
   * SDK's server closes (that ends their streams with no reply, and the client would wait for one
   * until its own time-out: a confirmation the person was being asked for when the connection was
   * revoked). Should the SDK send a reply first, the transport refuses the second.
   */
  async close(id: string, answer?: AppError): Promise<void> {
    const session = this.sessions.get(id);
    if (!session) return;
    const sdkCalls = [...session.sdkCalls.values()];
    if (answer) {
      for (const { cancellation } of session.inflight.values()) cancellation.abort(answer);
      for (const call of sdkCalls) call.cancellation.abort(answer);
    }
    this.forget(id);
    if (answer) await Promise.all(sdkCalls.map((call) => call.reply.then((reply) => session.transport.send(reply)).catch(() => undefined)));
    await session.server.close().catch(() => undefined);
  }

  /** Whether `session` is open here (not closed, nor replaced under its id). */
  isOpen(session: Session): boolean {
    return this.sessions.get(session.id) === session;
  }

  /** The connections that have a session open here. */
  connectionIds(): string[] {
    return [...new Set([...this.sessions.values()].map((s) => s.connectionId))];
  }

  /** The stored ids of the tokens open GET streams were opened with. */
  streamTokenIds(): string[] {
    return [...new Set([...this.sessions.values()].flatMap((s) => (s.streamTokenId ? [s.streamTokenId] : [])))];
  }

  /** A token was revoked on its own: the GET streams it opened close, as at its expiry; the sessions stay. */
  closeStreamsOf(tokenId: string): void {
    for (const session of this.sessions.values()) {
      if (session.streamTokenId !== tokenId) continue;
      clearTimeout(session.streamExpiry);
      session.streamTokenId = undefined;
      session.transport.closeStandaloneSSEStream();
    }
  }

  async closeConnection(connectionId: string, answer?: AppError): Promise<void> {
    await Promise.all([...this.sessions.values()].filter((s) => s.connectionId === connectionId).map((s) => this.close(s.id, answer)));
  }

  ofProduct(product: string): Session[] {
    return [...this.sessions.values()].filter((s) => s.product === product);
  }

  all(): Session[] {
    return [...this.sessions.values()];
  }

  /**
   * A session with a request in flight is not idle, however long ago that request came: a long
   * tool call, or a confirmation the person is still answering, would otherwise be cut off. Nor is
   * one whose client listens on its GET stream: closing it would end the stream its client waits
   * for notifications on (the stream itself ends with its token, and idle time counts from then).
   */
  private closeIdle(): void {
    const now = Date.now();
    for (const session of this.sessions.values()) {
      if (!busy(session) && now - activeAt(session, now) > this.options.idleMs) void this.close(session.id);
    }
  }

  /**
   * Every session; with `answer` (shutdown), the calls in flight end with it (close), and this
   * waits until the host's own have ended too, so that their audit records are queued before the
   * audit writer's last flush and the pool's close.
   */
  async closeAll(answer?: AppError): Promise<void> {
    clearInterval(this.sweeper);
    const direct = [...this.sessions.values()].flatMap((session) => [...session.inflight.values()]);
    await Promise.all([...this.sessions.keys()].map((id) => this.close(id, answer)));
    if (answer) await Promise.all(direct.map((call) => call.answered.catch(() => undefined)));
  }
}

/** When the session was last used: now, while its client listens on its GET stream. */
function activeAt(session: Session, now: number): number {
  return session.listening ? now : session.lastActiveAt;
}

/** Whether the session has a request in flight: a tool call running, or a confirmation being answered. */
function busy(session: Session): boolean {
  return session.requestIds.size > 0 || session.inflight.size > 0 || session.sdkCalls.size > 0;
}
