/**
 * The MCP host: Streamable HTTP at `{mcp_url}/{product}` (POST JSON-RPC, GET SSE stream, DELETE
 * session) through the MCP SDK's web-standard transport, one SDK Server and transport per session
 * (never shared across clients: GHSA-345p-7cg4-v4c7).
 *
 * Before a message reaches the SDK the host has: checked the Origin (DNS rebinding), authenticated
 * the bearer token (every request, the session id authenticates nothing), read the body once under
 * the size limit, refused batches, matched the session to the token's connection and user, and
 * run the pipeline's pre-checks so that a scope refusal is a real HTTP 403. Replies are SSE
 * streams (SDK 1.32.2 leaks per call with JSON replies in stateful mode, issue #2559); the head
 * of a reply is held until its first event, so a status the pipeline decides inside the call
 * (403 forbidden_cross_tenant) is still sent as the HTTP status, with the JSON-RPC error as body.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type Koa from 'koa';
import type { z } from 'zod';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import {
  CallToolRequestSchema, CancelledNotificationSchema, ErrorCode, GetPromptRequestSchema, InitializeRequestSchema, JSONRPCMessageSchema, JSONRPCNotificationSchema, JSONRPCRequestSchema,
  ListPromptsRequestSchema, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, ListToolsRequestSchema, McpError, PingRequestSchema, ReadResourceRequestSchema, SUPPORTED_PROTOCOL_VERSIONS,
  type ElicitRequestFormParams, type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { translateDbError } from '../db/errors.js';
import type { Principal } from '../db/grant_store.js';
import type { Catalog } from '../shared/catalog.js';
import type { Config } from '../shared/config.js';
import { AppError, toAppError } from '../shared/errors.js';
import { hostCheck, unknownHost, type HostCheck } from '../shared/hosts.js';
import { bearerToken, readBody, type PorticoState } from '../shared/http.js';
import { WindowLimiter } from '../shared/rate_limit.js';
import type { Logger } from '../shared/log.js';
import { Cancellation } from './cancellation.js';
import { jsonRpcErrorBody, jsonRpcErrorOf } from './errors.js';
import { assertJsonRpc, assertMessageShape } from './message_limits.js';
import { resultJson, type CallOptions, type Pipeline } from './pipeline.js';
import { SessionRegistry, type Session } from './sessions.js';

type Ctx = Koa.ParameterizedContext<PorticoState>;

/** Per-POST state the pipeline's outcome writes and the response head reads. */
interface HttpDecision {
  status?: number;
  headers?: Record<string, string>;
}

interface CallAuth {
  principal: Principal;
  requestId: string;
  http: HttpDecision;
  /** The endpoint's path as this request spelled it (a trailing slash or not): its challenges name that URL's metadata. */
  path: string;
}

/** A JSON-RPC error thrown into the SDK: it copies `code`, `message` and `data` onto the wire as they are. */
class WireError extends Error {
  constructor(readonly code: number, message: string, readonly data: unknown) {
    super(message);
  }
}

const MCP_METHODS = new Set(['POST', 'GET', 'DELETE']);
const PIPELINE_METHODS = new Set<string>(['tools/call', 'resources/read', 'prompts/get']);
/**
 * The hot methods of an established session, answered by the host itself with the SDK's own
 * request schemas (the SDK's per-message cost is the largest fixed cost per call, docs/performance.md).
 * Everything else, and anything unusual about these, goes through the SDK.
 */
interface RequestSchema {
  safeParse(value: unknown): SchemaParse;
}
type SchemaParse = { success: boolean; data?: unknown; error?: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> } };
/** The list methods: each answers its whole list in one page. */
const LIST_METHODS = new Set(['tools/list', 'resources/templates/list', 'resources/list', 'prompts/list']);

/**
 * A method's request inside the SDK's strict JSON-RPC envelope: one parse checks what its
 * transport checks (no other members, `_meta`) and what its handler checks (the params).
 */
function strictRequest(schema: { shape: { method: z.ZodType; params: z.ZodType } }): RequestSchema {
  return JSONRPCRequestSchema.extend({ method: schema.shape.method, params: schema.shape.params });
}

const DIRECT_METHODS: Record<string, RequestSchema> = {
  'tools/call': strictRequest(CallToolRequestSchema),
  'tools/list': strictRequest(ListToolsRequestSchema),
  'resources/read': strictRequest(ReadResourceRequestSchema),
  'resources/templates/list': strictRequest(ListResourceTemplatesRequestSchema),
  'resources/list': strictRequest(ListResourcesRequestSchema),
  'prompts/get': strictRequest(GetPromptRequestSchema),
  'prompts/list': strictRequest(ListPromptsRequestSchema),
  // Clients ping to keep a session alive; the SDK answers `{}` too, at the cost of its transport.
  ping: strictRequest(PingRequestSchema),
};
/** notifications/cancelled as the SDK acts on it: a notification its transport accepts (no id, no other members) with params its handler accepts. */
const CANCELLED_NOTIFICATION = JSONRPCNotificationSchema.extend({ method: CancelledNotificationSchema.shape.method, params: CancelledNotificationSchema.shape.params });
const SUPPORTED_VERSIONS = new Set<string>(SUPPORTED_PROTOCOL_VERSIONS);
/** The head of an SSE reply, as the SDK's transport writes it. */
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no' };
/**
 * The form of every confirmation question (the question itself is the message). One object for
 * all: the SDK compiles the schema of each accepted answer with the validator every session
 * shares, and Ajv keeps each schema object it compiled, by identity, for the life of the process
 * (a form per question cost ~5 KB kept and ~4 ms of compiling on the event loop per confirmation).
 */
const CONFIRM_FORM: ElicitRequestFormParams['requestedSchema'] = {
  type: 'object',
  properties: { confirm: { type: 'boolean', title: 'Yes, go ahead', description: 'Tick to go ahead with the change described above; nothing is changed otherwise.' } },
  required: ['confirm'],
};
/** Request headers the SDK transport looks at; nothing else (cookies, authorization) is handed to it. */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'];

export interface HostDeps {
  pipeline: Pipeline;
  config: Config;
  catalog: Catalog;
  log: Logger;
  version: string;
  isLive(productId: string): boolean;
}

export class McpHost {
  readonly sessions: SessionRegistry;
  /** One JSON-schema validator for every session's Server: building Ajv per server is the SDK's largest fixed cost. */
  private readonly validator = new AjvJsonSchemaValidator();
  private readonly allowedOrigins: Set<string>;
  private readonly allowedHost: HostCheck;
  /** RATE_LIMIT_PER_MINUTE, counted per connection (DESIGN.md §10). */
  private readonly limiter: WindowLimiter;
  /** Shutting down (drain): new requests are refused. */
  private draining = false;

  constructor(private readonly deps: HostDeps) {
    this.sessions = new SessionRegistry({ idleMs: deps.config.sessionIdleMs, maxPerConnection: deps.config.maxSessionsPerConnection, maxPerUser: deps.config.maxSessionsPerUser });
    this.allowedOrigins = new Set([deps.config.authUrl, deps.config.mcpUrl, deps.config.apiUrl].map((url) => new URL(url).origin).concat(deps.config.mcpCorsOrigins));
    this.allowedHost = hostCheck(deps.config);
    this.limiter = new WindowLimiter(deps.config.rateLimitPerMinute, 60_000);
  }

  /** Protected Resource Metadata URL of a product (RFC 9728 §3.1: path-inserted well-known form). */
  metadataUrl(productId: string): string {
    return this.metadataUrlOf(`${new URL(this.deps.config.mcpUrl).pathname.replace(/\/+$/, '')}/${productId}`);
  }

  /**
   * The metadata URL of the endpoint at `path` as a request spelled it: a client uses metadata
   * found through a challenge only if its `resource` is exactly the URL it called (RFC 9728 §3.3),
   * `{mcp_url}/forge/` as well as `{mcp_url}/forge`.
   */
  private metadataUrlOf(path: string): string {
    return `${new URL(this.deps.config.mcpUrl).origin}/.well-known/oauth-protected-resource${path}`;
  }

  async handle(ctx: Ctx, productId: string): Promise<void> {
    const requestId = ctx.state.requestId;
    let message: Record<string, any> | undefined;
    let token: string | undefined;
    let handling: { session: Session; id: string | number } | undefined;
    try {
      // MCP transports, "Security Warning": validate Origin to stop DNS rebinding from browsers.
      const origin = ctx.get('origin');
      if (origin && !this.allowedOrigins.has(origin)) throw new AppError('forbidden', 'requests from this Origin are not accepted');
      // The same warning, for pages that are same-origin after a DNS rebinding (they send no Origin on GET): Host must be ours.
      if (!this.allowedHost(ctx.hostname)) throw unknownHost();
      if (!MCP_METHODS.has(ctx.method)) {
        ctx.set('Allow', 'GET, POST, DELETE');
        throw new AppError('method_not_allowed', `${ctx.method} is not supported here; use POST, GET or DELETE`);
      }
      if (this.draining) throw new AppError('unavailable', 'this instance is shutting down; try again', { headers: { 'Retry-After': '1', Connection: 'close' } });
      token = bearerToken(ctx.get('authorization'));

      let principal: Principal;
      try {
        principal = await this.deps.pipeline.authenticate(token, productId);
      } catch (thrown) {
        const error = translateDbError(thrown);
        if (ctx.method === 'POST' && error.status === 401) {
          // The body of a refused call is read only to audit it, and only once its token turned out
          // to be someone's; one it cannot make out goes unaudited, as before any token check.
          const call = async () => {
            const refused = await this.readMessage(ctx).catch(() => undefined);
            return refused && { method: String(refused.method), params: refused.params };
          };
          const admit = (connectionId: string) => this.limiter.hit(connectionId) === 0;
          await this.deps.pipeline.auditRefusedToken(token, productId, call, error, requestId, admit).catch((auditError) =>
            this.deps.log.error('audit of a refused token failed', { request_id: requestId, err: auditError }));
        }
        throw error;
      }
      // Only now: a caller without a valid token gets its 401 whatever it sends, and cannot make
      // the server read and parse a body up to BODY_LIMIT_BYTES.
      if (ctx.method === 'POST') message = await this.readMessage(ctx);

      const retryAfter = unlimited(ctx.method, message) ? 0 : this.limiter.hit(principal.connectionId);
      if (retryAfter) {
        const error = new AppError('rate_limited', `too many requests on this connection; retry in ${retryAfter} s`, { headers: { 'Retry-After': String(retryAfter) } });
        // The first call refused in a window is audited, so the tenant sees that the limit was
        // reached; the rest are not, or a flood would fill the log (docs/security.md).
        if (message && PIPELINE_METHODS.has(message.method) && this.limiter.firstRefused(principal.connectionId)) {
          await this.deps.pipeline.auditRefusal(principal, productId, message.method, message.params, error, requestId);
        }
        throw error;
      }

      // The SDK would answer a malformed initialize with -32603 and its schema library's dump.
      if (message?.method === 'initialize' && message.id !== undefined) checkParams(InitializeRequestSchema.safeParse(message));
      const sessionId = ctx.get('mcp-session-id');
      const session = await this.sessionFor(ctx, sessionId, productId, principal, message);
      if (!session) return;

      // MCP transports, "Protocol Version Header": an unsupported version is 400, before anything is checked or run.
      // Present but empty is no version either (ctx.get answers '' for both).
      const version = ctx.get('mcp-protocol-version');
      if (sessionId && (version || 'mcp-protocol-version' in ctx.req.headers) && !SUPPORTED_VERSIONS.has(version)) {
        throw new AppError('invalid_request', `Bad Request: Unsupported protocol version: ${version.slice(0, 40)} (supported versions: ${[...SUPPORTED_VERSIONS].join(', ')})`);
      }
      // MCP basic protocol, "Requests": an id is unique among the session's requests in flight. A
      // second request under one would skip the checks below (the SDK would run it, and mix up the
      // two replies): it is refused before anything is checked, run or audited; the first goes on.
      if (message?.method !== undefined && message.id !== undefined) {
        if (session.requestIds.has(message.id) || session.sdkCalls.has(message.id)) {
          throw new AppError('invalid_request', `Invalid Request: request id ${JSON.stringify(message.id).slice(0, 80)} is already in flight in this session; send each request with a new id`);
        }
        session.requestIds.add(message.id);
        handling = { session, id: message.id };
      }
      // What the SDK's transport refuses before any handler (an Accept without JSON and SSE: 406; a
      // message its strict JSON-RPC schemas refuse: 400 -32700) is left to it to answer: nothing
      // here prechecks it, cancels for it or runs it, so nothing is audited either.
      const accept = ctx.get('accept');
      const parsed = message && accept.includes('application/json') && accept.includes('text/event-stream') ? parseMessage(message) : undefined;
      if (message && !parsed) return await this.forward(ctx, session, principal, message, !sessionId);
      if (message && PIPELINE_METHODS.has(message.method) && message.id !== undefined) {
        const refusal = await this.deps.pipeline.precheck(productId, principal, message.method, message.params, requestId);
        if (refusal) return this.sendRefusal(ctx, productId, refusal, message);
      }
      if (parsed?.cancels !== undefined) session.inflight.get(parsed.cancels)?.cancellation.abort();
      let direct: ReturnType<McpHost['directRequest']>;
      try {
        direct = parsed?.hot && this.directRequest(session, parsed.hot);
      } catch (thrown) {
        // Params that do not fit a pipeline method: a refused call, audited as precheck audits the others.
        if (message && PIPELINE_METHODS.has(message.method) && thrown instanceof AppError) {
          await this.deps.pipeline.auditRefusal(principal, productId, message.method, message.params, thrown, requestId);
        }
        throw thrown;
      }
      if (direct) return await this.answerDirectly(ctx, session, principal, direct);
      await this.forward(ctx, session, principal, message, !sessionId);
    } catch (thrown) {
      // A lost or busy database is `unavailable` (503, try again), wherever in the request it failed.
      const error = translateDbError(thrown);
      if (error.status >= 500) this.deps.log.error('mcp request failed', { request_id: requestId, err: thrown });
      if (error.status === 401) ctx.set('WWW-Authenticate', this.challenge(productId, ctx.path, token ? error.code : undefined));
      if (error.headers) ctx.set(error.headers);
      // Invalid params are an answer to a well-formed request, as the pipeline's refusals are (200).
      sendJson(ctx, error.code === 'invalid_arguments' ? 200 : error.status, jsonRpcErrorBody(error, requestId, idOf(message)));
    } finally {
      // Answered (or its client gone: a call the SDK still runs stays in sdkCalls until it ends).
      // The idle time-out counts from here: a call that ran longer than it must not leave a
      // session that is closed before its client can send the next request.
      if (handling) {
        handling.session.requestIds.delete(handling.id);
        handling.session.lastActiveAt = Date.now();
      }
    }
  }

  /** The body, read once under the size limit and parsed; one JSON-RPC message, never a batch. */
  private async readMessage(ctx: Ctx): Promise<Record<string, any>> {
    // The exact header every MCP client sends is recognised without parsing it (type-is does that for the rest).
    if (ctx.get('content-type') !== 'application/json' && !ctx.is('application/json')) throw new AppError('unsupported_media_type', 'expected Content-Type: application/json');
    const text = await readBody(ctx, this.deps.config.bodyLimitBytes);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new AppError('invalid_json', 'Parse error: the body is not valid JSON');
    }
    // MCP transports 2025-06-18+: the body is a single message; batches are refused whole (checklist I5).
    if (Array.isArray(parsed)) throw new AppError('invalid_request', 'JSON-RPC batches are not accepted; send one message per request');
    if (!parsed || typeof parsed !== 'object') throw new AppError('invalid_request', 'the body must be a JSON-RPC message object');
    assertMessageShape(parsed);
    assertJsonRpc(parsed as Record<string, unknown>);
    return parsed as Record<string, any>;
  }

  /** `WWW-Authenticate` of a 401 (RFC 6750 §3, RFC 9728 §5.1). */
  challenge(productId: string, path: string, error?: string): string {
    const scopes = this.deps.catalog.scopesOf(productId).join(' ');
    // A roadmap product advertises no scopes: the attribute is left out rather than sent empty
    // (RFC 6750 §3 has one or more scope tokens; the MCP SDK reads `scope=""` as the scope `""`
    // and registers with it, which the authorization server refuses).
    return `Bearer ${error ? `error="${error === 'connection_revoked' ? 'invalid_token' : error}", ` : ''}resource_metadata="${this.metadataUrlOf(path)}"${scopes ? `, scope="${scopes}"` : ''}`;
  }

  private sendRefusal(ctx: Ctx, productId: string, error: AppError, message: Record<string, any>): void {
    const kind = message.method === 'resources/read' ? 'resource' : message.method === 'prompts/get' ? 'prompt' : 'tool';
    const decision = this.httpDecision(productId, ctx.path, error);
    if (decision.headers) ctx.set(decision.headers);
    sendJson(ctx, decision.status ?? 200, jsonRpcErrorBody(error, ctx.state.requestId, idOf(message), kind));
  }

  /**
   * Refusals that are HTTP statuses in their own right (MCP authorization, "Runtime Insufficient
   * Scope Errors"); a connection revoked while its call ran is refused as the token check refuses
   * the next request (DESIGN.md §7).
   */
  private httpDecision(productId: string, path: string, error: AppError): HttpDecision {
    if (error.code === 'connection_revoked') return { status: 401, headers: { 'WWW-Authenticate': this.challenge(productId, path, error.code) } };
    if (error.code === 'insufficient_scope') {
      const scope = String(error.details?.scope ?? '');
      return { status: 403, headers: { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${this.metadataUrlOf(path)}"` } };
    }
    if (error.code === 'forbidden_cross_tenant') return { status: 403 };
    return {};
  }

  /**
   * The session of this request: an existing one only if it belongs to this token's connection
   * and user (otherwise 404, exactly like an unknown id), or a new one for `initialize`.
   */
  private async sessionFor(ctx: Ctx, sessionId: string, productId: string, principal: Principal, message: Record<string, any> | undefined): Promise<Session | undefined> {
    if (sessionId) {
      const session = this.sessions.find(sessionId, { product: productId, connectionId: principal.connectionId, userId: principal.user.id });
      if (!session) {
        sendJson(ctx, 404, { jsonrpc: '2.0', id: idOf(message), error: { code: -32001, message: 'Session not found', data: { code: 'not_found', request_id: ctx.state.requestId } } });
        return undefined;
      }
      return session;
    }
    if (ctx.method === 'POST' && message?.method === 'initialize') {
      // The SDK takes an initialize without an id for one and answers 202 with no session id: a session nobody could use.
      if (message.id === undefined) throw new AppError('invalid_request', 'initialize is a request: send it with an "id"; no session was opened');
      return this.createSession(productId, principal);
    }
    sendJson(ctx, 400, {
      jsonrpc: '2.0', id: idOf(message),
      error: { code: -32000, message: 'Bad Request: Mcp-Session-Id header is required (send initialize first)', data: { code: 'invalid_request', request_id: ctx.state.requestId } },
    });
    return undefined;
  }

  private createSession(productId: string, principal: Principal): Session {
    const product = this.deps.catalog.product(productId)!;
    const server = new Server(
      { name: `portico-${productId}`, title: `Portico ${product.title}`, version: this.deps.version },
      {
        // A surface that ships (or returns to the roadmap) changes all three lists: each is announced.
        capabilities: { tools: { listChanged: true }, resources: { listChanged: true }, prompts: { listChanged: true } },
        instructions: `${product.title} (${product.kind}) for one organization. Every call is checked against this connection's scopes and organization, and audited. ` +
          'Destructive tools first answer confirmation_required; repeat the same call with confirmed: true after the person agreed.',
        jsonSchemaValidator: this.validator,
      },
    );
    const id = randomUUID();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessionclosed: () => this.sessions.forget(id),
    });
    const session: Session = { id, product: productId, connectionId: principal.connectionId, userId: principal.user.id, server, transport, lastActiveAt: Date.now(), requestIds: new Set(), inflight: new Map(), sdkCalls: new Map() };
    transport.onclose = () => this.sessions.forget(id);
    this.register(server, session);
    // connect() only wires callbacks; the transport's start() is a no-op.
    void server.connect(transport);
    // Registered (and counted against the connection's cap) only once the SDK accepted the initialize: see adopt().
    return session;
  }

  /**
   * A session made for an initialize joins the registry only if the SDK's transport accepted the
   * initialize (it then has its id); one it refused (406, 400 …) handed out no id and is closed,
   * so it neither lingers nor pushes the connection's working sessions over the cap.
   */
  private async adopt(session: Session): Promise<void> {
    if (session.transport.sessionId === session.id) this.sessions.add(session);
    else await session.server.close().catch(() => undefined);
  }

  /** The SDK handlers of one session: each reads the caller from the request and asks the pipeline. */
  private register(server: Server, session: Session): void {
    const auth = (extra: { authInfo?: { extra?: Record<string, unknown> } }) => extra.authInfo!.extra as unknown as CallAuth;
    const handle = (method: string) => async (request: { params?: unknown }, extra: { authInfo?: { extra?: Record<string, unknown> }; signal: AbortSignal; requestId: string | number }) => {
      const call = auth(extra);
      // The call's own cancellation, as the host's direct answers have: the SDK's signal (a client's
      // cancel, its server closing) gives no reason, a session closed with an answer (a revocation) does.
      const cancellation = new Cancellation();
      if (extra.signal.aborted) cancellation.abort();
      else extra.signal.addEventListener('abort', () => cancellation.abort(), { once: true });
      const askPerson = method === 'tools/call' ? this.elicitation(server, extra.requestId, cancellation) : undefined;
      const answered = this.answer(session.product, method, (request.params ?? {}) as Record<string, any>, call, cancellation, askPerson);
      const reply = answered.then(
        (result): JSONRPCMessage => ({ jsonrpc: '2.0', id: extra.requestId, result: result as Record<string, unknown> }),
        (error: WireError): JSONRPCMessage => ({ jsonrpc: '2.0', id: extra.requestId, error: { code: error.code, message: error.message, data: error.data } }));
      session.sdkCalls.set(extra.requestId, { cancellation, reply });
      try {
        return (await answered) as any;
      } finally {
        // The SDK sends nothing for a request its client cancelled, and its transport then holds the
        // request's stream open until the session ends. The host sends the reply (`timeout`, once
        // audited), as for the calls it answers itself, and the stream ends; a session closing
        // (a revocation) answers its calls itself (SessionRegistry.close).
        if (extra.signal.aborted && this.sessions.isOpen(session)) await reply.then((message) => session.transport.send(message)).catch(() => undefined);
        session.sdkCalls.delete(extra.requestId);
      }
    };
    server.setRequestHandler(ListToolsRequestSchema, handle('tools/list'));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, handle('resources/templates/list'));
    server.setRequestHandler(ListResourcesRequestSchema, handle('resources/list'));
    server.setRequestHandler(ListPromptsRequestSchema, handle('prompts/list'));
    server.setRequestHandler(CallToolRequestSchema, handle('tools/call'));
    server.setRequestHandler(ReadResourceRequestSchema, handle('resources/read'));
    server.setRequestHandler(GetPromptRequestSchema, handle('prompts/get'));
  }

  /** Asks the person through the client (form elicitation), when the client declared it. */
  private elicitation(server: Server, relatedRequestId: string | number, cancellation: Cancellation): CallOptions['askPerson'] {
    if (!server.getClientCapabilities()?.elicitation?.form) return undefined;
    return async (sentence: string) => {
      const { signal } = cancellation;
      let answer;
      try {
        answer = await server.elicitInput(
          {
            mode: 'form',
            message: `${sentence} This cannot be undone. Do you want to go ahead?`,
            requestedSchema: CONFIRM_FORM,
          },
          // The call's signal: a client that cancels the call (or closes its session) withdraws the
          // question too; the SDK sends notifications/cancelled for its elicitation/create.
          { relatedRequestId, signal, timeout: this.deps.config.confirmationTimeoutMs },
        );
      } catch (thrown) {
        // Cancelled (or cut off by a revocation, which says so), or the person did not answer within
        // CONFIRMATION_TIMEOUT_MS: nothing was changed, and that is an expected end of a call, not an internal error.
        if (signal.aborted) throw signal.reason instanceof AppError ? signal.reason : new AppError('timeout', 'the request was cancelled; nothing was changed');
        if (thrown instanceof McpError && thrown.code === ErrorCode.RequestTimeout) {
          throw new AppError('timeout', 'the person did not answer the confirmation in time; nothing was changed');
        }
        // The client answered with a JSON-RPC error, or with no answer to this form (the SDK refuses
        // it): nobody could be asked, which is not a failure of this call. It is confirmed as for a
        // client without elicitation (confirmation_required, then confirmed: true).
        this.deps.log.warn('the client did not answer a confirmation it was asked for', { err: thrown });
        return undefined;
      }
      return answer.action === 'accept' && answer.content?.confirm === true;
    };
  }

  /**
   * One request of a session, asked of the pipeline: the same for the SDK's handlers and for the
   * host's direct answers. A failure becomes the JSON-RPC error; a status it implies (403, 401)
   * is noted in `call.http` for the response head.
   */
  private async answer(productId: string, method: string, params: Record<string, any>, call: CallAuth, cancellation: Cancellation, askPerson?: CallOptions['askPerson']): Promise<unknown> {
    const { pipeline } = this.deps;
    const options: CallOptions = { requestId: call.requestId, cancellation, askPerson };
    const kind = method === 'resources/read' ? 'resource' : method === 'prompts/get' ? 'prompt' : 'tool';
    try {
      // Every list here comes whole, in one page, and never hands out a cursor: one sent is none of
      // ours (MCP pagination: an invalid cursor SHOULD be -32602).
      if (params.cursor !== undefined && LIST_METHODS.has(method)) {
        throw new AppError('invalid_arguments', 'invalid params: params.cursor: this list comes whole, in one page, and has no cursors; call without "cursor"', { details: { field: 'params.cursor' } });
      }
      switch (method) {
        case 'ping': return {};
        case 'tools/list': return { tools: pipeline.visibleTools(productId, call.principal) };
        case 'resources/templates/list': return { resourceTemplates: pipeline.visibleResourceTemplates(productId, call.principal) };
        // Every resource is a template over tenant data; there is no fixed list to enumerate.
        case 'resources/list': return { resources: [] };
        case 'prompts/list': return { prompts: pipeline.visiblePrompts(productId, call.principal) };
        case 'tools/call': return await pipeline.callTool(productId, call.principal, params.name, params.arguments, options);
        case 'resources/read': return await pipeline.readResource(productId, call.principal, params.uri, options);
        case 'prompts/get': return await pipeline.getPrompt(productId, call.principal, params.name, params.arguments, options);
        default: throw new AppError('internal', `no handler for ${method}`);
      }
    } catch (thrown) {
      const error = toAppError(thrown);
      const decision = this.httpDecision(productId, call.path, error);
      if (decision.status) call.http.status = decision.status;
      if (decision.headers) call.http.headers = decision.headers;
      const body = jsonRpcErrorOf(error, call.requestId, kind);
      throw new WireError(body.code, body.message, body.data);
    }
  }

  /**
   * A hot request, parsed with the SDK's own request schema (parseMessage) after the headers its
   * transport checks (handle), when the host may answer it itself: on an established session.
   * Anything else goes to the SDK, which answers it as before.
   */
  private directRequest(session: Session, hot: NonNullable<ParsedMessage['hot']>): { id: string | number; method: string; params: Record<string, any> } | undefined {
    // An unsupported MCP-Protocol-Version was refused (400) before (handle): every direct request has a session.
    if (session.transport.sessionId !== session.id) return undefined;
    const params = ((checkParams(hot.parse).data as { params?: Record<string, any> }).params ?? {}) as Record<string, any>;
    if (hot.method === 'tools/call') {
      // Portico declares no tasks capability: the SDK would refuse a task-augmented call as -32603 with its own text and no data.
      if (params.task !== undefined) throw new AppError('invalid_arguments', 'invalid params: params.task: this server does not run tools as tasks; call without "task"', { details: { field: 'params.task' } });
      // Elicited confirmations need the SDK's machinery.
      if (this.deps.pipeline.compiled(String(params.name))?.tool.destructive && session.server.getClientCapabilities()?.elicitation?.form) return undefined;
    }
    return { id: hot.id, method: hot.method, params };
  }

  /** Answers a hot request through the pipeline and writes the reply as the SDK would (one SSE event). */
  private async answerDirectly(ctx: Ctx, session: Session, principal: Principal, request: { id: string | number; method: string; params: Record<string, any> }): Promise<void> {
    const call: CallAuth = { principal, requestId: ctx.state.requestId, http: {}, path: ctx.path };
    const cancellation = new Cancellation();
    const answered = this.answer(session.product, request.method, request.params, call, cancellation);
    session.inflight.set(request.id, { cancellation, answered });
    let body: string;
    try {
      const result = await answered;
      // The SDK's key order ({ result, jsonrpc, id }); a tool's result serialised by resultJson.
      body = `{"result":${resultJson(result) ?? 'null'},"jsonrpc":"2.0","id":${JSON.stringify(request.id)}}`;
    } catch (thrown) {
      const error = thrown instanceof WireError ? thrown : new WireError(-32603, 'internal error', { code: 'internal', request_id: call.requestId });
      body = JSON.stringify({ jsonrpc: '2.0', id: request.id, error: { code: error.code, message: error.message, data: error.data } });
    } finally {
      session.inflight.delete(request.id);
    }
    if (call.http.status && call.http.status !== 200) {
      // As writeResponse does for the SDK's replies: a decided status goes out with the JSON-RPC error as a plain JSON body.
      ctx.status = call.http.status;
      ctx.set({ ...(call.http.headers ?? {}), 'mcp-session-id': session.id });
      ctx.type = 'application/json';
      ctx.body = body;
      return;
    }
    // Straight to Node, as writeResponse writes the SDK's replies: the hottest response of the
    // service skips Koa's header and body setters. Headers set earlier (X-Request-Id, CORS) stay.
    const event = `event: message\ndata: ${body}\n\n`;
    ctx.respond = false;
    ctx.status = 200;
    ctx.res.writeHead(200, { ...SSE_HEADERS, 'mcp-session-id': session.id, 'content-length': Buffer.byteLength(event) });
    ctx.res.end(event);
  }

  /** Hands the parsed message to the session's transport and writes what it answers. */
  private async forward(ctx: Ctx, session: Session, principal: Principal, message: Record<string, any> | undefined, isNew = false): Promise<void> {
    const headers = new Headers();
    for (const name of TRANSPORT_HEADERS) {
      const value = ctx.get(name);
      if (value) headers.set(name, value);
    }
    const request = new Request(new URL(ctx.path, 'http://portico.internal'), { method: ctx.method, headers });
    const call: CallAuth = { principal, requestId: ctx.state.requestId, http: {}, path: ctx.path };
    const response = await session.transport.handleRequest(request, {
      parsedBody: message,
      authInfo: { token: '', clientId: principal.clientId, scopes: [...principal.scopes], expiresAt: Math.floor(principal.expiresAt / 1000), extra: call as unknown as Record<string, unknown> },
    });
    // Before the reply is written: the client may use the new session id the moment it has it.
    if (isNew) await this.adopt(session);
    if (ctx.method === 'GET' && response.ok && response.body) {
      // A GET that passed the draining check before shutdown began (its token was being checked)
      // opens its stream after drain() ended the others: it ends now too, or shutdown would wait
      // for it until DRAIN_MS and cut it.
      if (this.draining) session.transport.closeStandaloneSSEStream();
      else this.expireStream(session, principal);
      // While its client listens, the session is in use; its idle time counts from the stream's end.
      session.listening = (session.listening ?? 0) + 1;
      try {
        await writeResponse(ctx, response, call.http);
      } finally {
        session.listening -= 1;
        session.lastActiveAt = Date.now();
      }
      return;
    }
    await writeResponse(ctx, response, call.http);
  }

  /** The GET stream lives no longer than the token that opened it (checklist R5): its expiry, or its revocation (SessionRegistry.closeStreamsOf). */
  private expireStream(session: Session, principal: Principal): void {
    if (session.streamExpiry) clearTimeout(session.streamExpiry);
    session.streamTokenId = principal.tokenId;
    const delay = Math.max(0, Math.min(principal.expiresAt - Date.now(), 2_147_483_647));
    session.streamExpiry = setTimeout(() => session.transport.closeStandaloneSSEStream(), delay);
    session.streamExpiry.unref();
  }

  /** A product's surface changed: its tools, resource templates and prompts appeared or went (DESIGN.md §5). */
  async notifyToolsChanged(productId: string): Promise<void> {
    await Promise.all(this.sessions.ofProduct(productId).map((s) => Promise.all([
      s.server.sendToolListChanged().catch(() => undefined),
      s.server.sendResourceListChanged().catch(() => undefined),
      s.server.sendPromptListChanged().catch(() => undefined),
    ])));
  }

  /**
   * Shutdown begins: every GET stream ends (a client reconnects, through the load balancer, to
   * another instance) and new requests are refused with 503, while calls in flight finish.
   */
  drain(): void {
    this.draining = true;
    for (const session of this.sessions.all()) session.transport.closeStandaloneSSEStream();
  }

  /**
   * Shutdown, once the drain is over: a call still running (past the drain's time) ends as
   * `unavailable`, audited, and its transaction is rolled back; then the sessions close.
   */
  async close(): Promise<void> {
    await this.sessions.closeAll(new AppError('unavailable', 'this instance shut down before the call finished; nothing was changed, try again'));
  }
}

/**
 * What the rate limit neither counts nor refuses: a client that was told to slow down may still
 * close its session (DELETE), stop a call (notifications/cancelled) and answer the server's own
 * request, which starts no work: refused, the person's answer to a confirmation the server asked
 * for would be lost, and the call admitted before would end as if the person never answered.
 */
function unlimited(method: string, message: Record<string, any> | undefined): boolean {
  if (method === 'DELETE') return true;
  if (!message) return false;
  return message.method === undefined || (message.method === 'notifications/cancelled' && message.id === undefined);
}

function idOf(message: Record<string, any> | undefined): string | number | null {
  const id = message?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

function sendJson(ctx: Ctx, status: number, body: unknown): void {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = JSON.stringify(body);
}

/**
 * Writes the transport's Response to Node. An SSE reply's head waits for its first event: if the
 * pipeline decided a status for this call (403), the event's JSON-RPC message goes out as a plain
 * JSON body with that status instead of a 200 stream.
 */
async function writeResponse(ctx: Ctx, response: Response, decision: HttpDecision): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  const isStream = (headers['content-type'] ?? '').startsWith('text/event-stream');
  if (!response.body || !isStream) {
    let text = response.body ? await response.text() : '';
    // The transport's own refusals (406, 415, 409, 400 …) get the data.code and request_id every Portico error carries.
    if (response.status >= 400 && text) text = withErrorData(text, response.status, ctx.state.requestId);
    ctx.respond = false;
    ctx.status = response.status;
    ctx.res.writeHead(response.status, headers);
    ctx.res.end(text);
    return;
  }

  ctx.respond = false;
  const res: ServerResponse = ctx.res;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let closed = false;
  res.on('close', () => {
    closed = true;
    void reader.cancel().catch(() => undefined);
  });

  // A POST reply's head waits for one whole event (or the end of the stream); a GET stream's does not.
  let buffered = '';
  let done = false;
  while (ctx.method === 'POST' && !done && !/\n\n/.test(buffered.replace(/^:[^\n]*\n\n/gm, ''))) {
    const chunk = await reader.read().catch(() => ({ done: true, value: undefined }));
    if (chunk.done) done = true;
    else buffered += decoder.decode(chunk.value, { stream: true });
  }
  if (closed) return;

  if (decision.status && decision.status !== 200) {
    const data = /^data: (.*)$/m.exec(buffered)?.[1];
    void reader.cancel().catch(() => undefined);
    ctx.status = decision.status;
    res.writeHead(decision.status, { ...(decision.headers ?? {}), 'content-type': 'application/json', ...(headers['mcp-session-id'] ? { 'mcp-session-id': headers['mcp-session-id'] } : {}) });
    res.end(data ?? '');
    return;
  }

  ctx.status = response.status;
  res.writeHead(response.status, headers);
  if (buffered) res.write(buffered);
  else res.flushHeaders(); // an idle GET stream must reach the client now, not with the first keep-alive
  while (!done && !closed) {
    const chunk = await reader.read().catch(() => ({ done: true, value: undefined }));
    if (chunk.done) break;
    res.write(chunk.value);
  }
  if (!closed) res.end();
}

const TRANSPORT_ERROR_CODES: Record<number, string> = { 400: 'invalid_request', 404: 'not_found', 405: 'method_not_allowed', 406: 'invalid_request', 409: 'conflict', 413: 'payload_too_large', 415: 'unsupported_media_type' };

function withErrorData(text: string, status: number, requestId: string): string {
  try {
    const body = JSON.parse(text) as { error?: { data?: unknown } };
    if (body.error && (body.error.data === undefined || typeof body.error.data !== 'object')) {
      body.error.data = { code: TRANSPORT_ERROR_CODES[status] ?? (status >= 500 ? 'internal' : 'invalid_request'), request_id: requestId };
      return JSON.stringify(body);
    }
  } catch {
    // not JSON: pass it on as it is
  }
  return text;
}

/** What the host acts on in a message the SDK's transport accepts. */
interface ParsedMessage {
  /** A hot method's request, parsed with its method's schema: directRequest may answer it. */
  hot?: { id: string | number; method: string; parse: SchemaParse };
  /** The request a valid notifications/cancelled names. */
  cancels?: string | number;
}

/**
 * What the host acts on before the SDK, parsed once as the SDK would take it: undefined for a hot
 * request its transport refuses (its JSON-RPC schemas are strict). That one parse checks envelope
 * and params together; only when it fails does the SDK's message schema say which is at fault.
 */
function parseMessage(message: Record<string, any>): ParsedMessage | undefined {
  // Own keys only: a method named "constructor" or "__proto__" must not find Object.prototype's members.
  if (message.id !== undefined && Object.hasOwn(DIRECT_METHODS, message.method)) {
    const parse = DIRECT_METHODS[message.method].safeParse(message);
    return parse.success || JSONRPCMessageSchema.safeParse(message).success ? { hot: { id: message.id, method: message.method, parse } } : undefined;
  }
  // Anything else goes to the SDK, which checks it itself; a cancellation it would ignore cancels nothing here either.
  return message.method === 'notifications/cancelled' ? { cancels: CANCELLED_NOTIFICATION.safeParse(message).data?.params.requestId } : {};
}

/**
 * A request parsed with the SDK's own schema for its method. Failing, the SDK would answer
 * -32603 with the schema library's issue list as its message; this is JSON-RPC's "invalid params"
 * (-32602, `invalid_arguments`) naming the first field at fault.
 */
function checkParams(parsed: SchemaParse): SchemaParse {
  if (parsed.success) return parsed;
  const issue = parsed.error?.issues[0];
  const field = issue?.path.map(String).join('.') || 'params';
  throw new AppError('invalid_arguments', `invalid params: ${field}: ${issue?.message ?? 'does not match the method'}`, { details: { field } });
}
