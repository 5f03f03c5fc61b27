/**
 * The customer console at {api_url}/mcp (DESIGN.md §8): server-rendered pages for people, and
 * the same operations as a versioned JSON API at {api_url}/mcp/v1/ for scripts, which is an
 * OAuth-protected resource of our own authorization server.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { Mount, PorticoContext } from '../../app.js';
import type { Catalog } from '../../shared/catalog.js';
import { consolePath } from '../../shared/config.js';
import { AppError, isAppError } from '../../shared/errors.js';
import type { EventBus } from '../../shared/events.js';
import { bearerToken, publicDocumentCors, readForm, type PorticoState } from '../../shared/http.js';
import { WindowLimiter } from '../../shared/rate_limit.js';
import { authenticate, emailsOf, findUserById, MAX_EMAIL_LENGTH, membershipIn, membershipsOf, normaliseEmail } from '../../db/accounts.js';
import { appendAudit, auditPages, chainHead, chainPages, dailyActivity, formatCheckpoint, parseCheckpoint, queryAudit, verifyStoredChain, type Head } from '../../db/audit.js';
import { exportChunks, type ExportFormat } from '../../db/audit_export.js';
import { translateDbError } from '../../db/errors.js';
import { authenticateBearer, touchConnection } from '../../db/grant_store.js';
import { readOnlyParameter } from '../../shared/client_config.js';
import { CONSOLE_SCOPES } from '../../shared/console_scopes.js';
import { connectPage, COPY_SCRIPT_HASH } from './connect_page.js';
import { page, plural, type Html } from './html.js';
import * as pages from './pages.js';
import {
  checkCsrf, clearSessionCookie, createSession, csrfToken, deleteSession, findSession, pruneExpiredSessions, refuseCrossSite, sessionBinding, sessionIdOf, writeSessionCookie,
  type ConsoleSession, type SessionOptions,
} from './session.js';
import {
  AUDIT_FILTERS, auditFor, auditJson, checkQuery, connectionFor, connectionJson, connectionsFor, PAGE_PARAMS, parseAuditQuery, requireScope, revocationReason, revokeFor, type Viewer,
} from './service.js';

const PRE_SESSION_COOKIE = 'portico_console_pre';
/** What the connections page says after a revocation (`?notice=`). */
const NOTICES = new Map([
  ['revoked', 'The connection was revoked. Its tokens no longer work and its sessions are closed.'],
  ['already_revoked', 'That connection was already revoked: nothing changed.'],
]);
/** What the sign-in page says when a session ended under the person (`?ended=`). */
const ENDED = new Map([
  ['1', 'Your session has ended. Sign in again to go on where you were.'],
  ['unsent', 'Your session ended before the form was sent, so nothing was changed. Sign in again and send it once more.'],
]);
const PRM_PATH = '/.well-known/oauth-protected-resource';
const CHART_DAYS = 14;
// The same limit as the authorization server's sign-in page (auth/interactions.ts).
const SIGN_IN_ATTEMPTS = 10;
const SIGN_IN_WINDOW_MS = 60_000;

export function consoleMount(options: { catalog: Catalog; events: EventBus }): Mount {
  return (app, context) => {
    const { config } = context;
    const api = new URL(config.apiUrl);
    const base = consolePath(config);
    const resource = `${config.apiUrl}/mcp`;
    const sessionOptions: SessionOptions = { path: base, macKey: context.secrets.macKey };
    const consoleScopes = Object.keys(CONSOLE_SCOPES);
    const describeScope = (scope: string) => CONSOLE_SCOPES[scope] ?? options.catalog.describeScope(scope);
    const productTitle = (id: string) => (id === 'console' ? 'Console API' : options.catalog.product(id)?.title ?? id);
    const signInAttempts = new WindowLimiter(SIGN_IN_ATTEMPTS, SIGN_IN_WINDOW_MS);
    const exports = new ExportsUnderWay(context);

    // Paths match as written: the cookies' Secure flag is decided by the exact path (app.ts
    // secureByPublicUrl), and @koa/router would otherwise serve /API/MCP/login too.
    const router = new Router<PorticoState>({ sensitive: true });

    // RFC 9728 protected resource metadata of the JSON API, a public document any origin may read:
    // for the API as a whole ({api_url}/mcp) and for each URL of it. A client that found metadata
    // through a 401 uses it only if its `resource` is the URL it called (§3.3), so each 401 names
    // the metadata of its own URL; all of them name the one console resource at the authorization
    // server (auth/resources.ts).
    const isApiUrl = (path: string) => path === base || (path.startsWith(`${base}/v1/`) && router.match(path, 'GET').path.length > 0);
    app.use((ctx, next) => {
      const path = ctx.path.startsWith(PRM_PATH) ? ctx.path.slice(PRM_PATH.length) : undefined;
      if (path === undefined || !isApiUrl(path)) return next();
      ctx.state.route = '/.well-known/oauth-protected-resource/console';
      return publicDocumentCors(ctx, async () => {
        if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
          throw new AppError('method_not_allowed', `${ctx.method} is not supported here; use GET`, { headers: { Allow: 'GET, HEAD' } });
        }
        ctx.body = {
          resource: `${api.origin}${path}`, authorization_servers: [config.authUrl], scopes_supported: consoleScopes,
          bearer_methods_supported: ['header'], resource_name: 'Portico console API',
        };
      });
    });
    /** RFC 9728 §3.1: the metadata of `{origin}{path}` is at `{origin}/.well-known/oauth-protected-resource{path}` (a quote in the path comes out escaped). */
    const metadataUrlOf = (ctx: Context) => new URL(`${PRM_PATH}${ctx.path}`, api.origin).href;

    // ---- JSON API (bearer tokens) -------------------------------------------------------
    /**
     * Authenticates the token, then checks the query parameters the route takes (`names`, as
     * takes() does): a request refused for them is no use of the connection, whose "last used" and
     * call count stay as they were (nothing is changed for a refused request).
     */
    const bearer = (names: readonly string[]) => async (ctx: Context, next: Next) => {
      ctx.state.route = `${base}/v1`;
      const header = ctx.get('authorization');
      const challenge = (extra = '') => `Bearer resource_metadata="${metadataUrlOf(ctx)}", scope="${consoleScopes.join(' ')}"${extra}`;
      try {
        const token = bearerToken(header);
        if (!token) throw new AppError('invalid_token', 'a bearer token is required', { headers: { 'WWW-Authenticate': challenge() } });
        const principal = await authenticateBearer(context.db, token, resource).catch((error: unknown) => {
          const e = translateDbError(error);
          throw new AppError(e.code, e.message, { cause: error, headers: e.status === 401 ? { 'WWW-Authenticate': challenge(`, error="invalid_token"`) } : undefined });
        });
        // The role is read with the token (a former member's token is refused there as revoked).
        (ctx.state as ConsoleState).viewer = {
          userId: principal.user.id, email: principal.user.email, tenant: principal.tenant, role: principal.role, scopes: principal.scopes, requestId: ctx.state.requestId,
        };
        checkQuery(ctx.query, names);
        // The API's own connection is listed like any other: when it was last used, how often
        // (not after a revocation that committed since the token was checked).
        await touchConnection(context.db, principal.connectionId);
        await next();
      } catch (error) {
        if (isAppError(error) && error.code === 'insufficient_scope') {
          const scope = String(error.details?.scope ?? '');
          throw new AppError('insufficient_scope', error.message, {
            details: error.details,
            headers: { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${metadataUrlOf(ctx)}"` },
          });
        }
        throw error;
      }
    };
    const viewerOf = (ctx: Context) => (ctx.state as ConsoleState).viewer!;

    router.get(`${base}/v1/connections`, bearer(['include_revoked', ...PAGE_PARAMS]), async (ctx) => {
      const { rows, next, previous } = await connectionsFor(context.db, viewerOf(ctx), { includeRevoked: flag(ctx.query.include_revoked, 'include_revoked'), limit: ctx.query.limit, cursor: ctx.query.cursor });
      ctx.body = { connections: rows.map((c) => connectionJson(c, describeScope)), next_cursor: next ?? null, prev_cursor: previous ?? null };
    });
    router.get(`${base}/v1/connections/:id`, bearer([]), async (ctx) => {
      ctx.body = connectionJson(await connectionFor(context.db, viewerOf(ctx), ctx.params.id), describeScope);
    });
    router.delete(`${base}/v1/connections/:id`, bearer([]), async (ctx) => {
      const { connection, revoked } = await revokeFor(context.db, options.events, viewerOf(ctx), ctx.params.id);
      ctx.body = { ...connectionJson(connection, describeScope), already_revoked: !revoked };
    });
    router.get(`${base}/v1/audit`, bearer([...AUDIT_FILTERS, ...PAGE_PARAMS]), async (ctx) => {
      const viewer = viewerOf(ctx);
      const { rows, next, previous } = await auditFor(context.db, viewer, parseAuditQuery(viewer, ctx.query));
      ctx.body = { records: rows.map(auditJson), next_cursor: next ?? null, prev_cursor: previous ?? null };
    });
    router.get(`${base}/v1/audit/export`, bearer(['format', ...AUDIT_FILTERS]), async (ctx) => sendExport(ctx, context, exports, viewerOf(ctx)));
    router.get(`${base}/v1/audit/verify`, bearer(['checkpoint']), async (ctx) => {
      const checkpoint = checkpointParam(ctx.query.checkpoint);
      const result = await verifyFor(context, viewerOf(ctx), checkpoint);
      ctx.body = checkpoint ? { ...result, checkpoint } : result;
    });

    // ---- HTML pages (sign-in session) ---------------------------------------------------
    /** A path of the console's pages (the API is under /v1). */
    const isPagePath = (path: string) => path === base || (path.startsWith(`${base}/`) && !/^\/v1(\/|$)/.test(path.slice(base.length)));
    /**
     * A console page to go back to after signing in: a path and query under the console, given
     * as written or as a same-origin address. Anything else (another site, the API, the sign-in
     * steps themselves, or the page everyone lands on anyway) is no return path, so a link cannot
     * send a person elsewhere through the sign-in.
     */
    const returnPath = (value: string | undefined): string | undefined => {
      if (!value || value.length > 2000) return undefined;
      let url: URL;
      try {
        url = new URL(value, api.origin);
      } catch {
        return undefined;
      }
      if (url.origin !== api.origin || !isPagePath(url.pathname)) return undefined;
      if ([base, `${base}/login`, `${base}/logout`, `${base}/organization`].includes(url.pathname)) return undefined;
      if (url.pathname === `${base}/connections` && !url.search) return undefined;
      return `${url.pathname}${url.search}`;
    };
    /**
     * Where a request without a live session is sent: the sign-in page, with the page to come back
     * to (the one asked for, or for a form the page it was sent from) and, when a session ended
     * under the person, why they are asked again. A form sent without one did nothing.
     */
    const signInAddress = (ctx: Context): string => {
      const query = new URLSearchParams();
      const form = ctx.method !== 'GET' && ctx.method !== 'HEAD';
      const back = returnPath(form ? ctx.get('referer') : ctx.originalUrl);
      if (back) query.set('next', back);
      if (form) query.set('ended', 'unsent');
      else if (sessionIdOf(ctx).id) query.set('ended', '1');
      return query.size ? `${base}/login?${query}` : `${base}/login`;
    };
    /** After signing in: the return path, through the organization choice when there is one to make. */
    const afterSignIn = (back: string | undefined, choose: boolean): string =>
      choose ? `${base}/organization${back ? `?${new URLSearchParams({ next: back })}` : ''}` : back ?? `${base}/connections`;
    const htmlErrors = async (ctx: Context, next: Next) => {
      ctx.state.route = `${base}/pages`;
      securityHeaders(ctx);
      try {
        await next();
      } catch (error) {
        const e = translateDbError(error);
        if (e.code === 'unauthenticated') return ctx.redirect(signInAddress(ctx));
        if (e.status >= 500) context.log.error('console page failed', { request_id: ctx.state.requestId, err: error });
        if (e.headers) ctx.set(e.headers);
        ctx.status = e.status;
        ctx.type = 'html';
        ctx.body = page({ title: 'Error', basePath: base }, pages.errorPage({ base }, {
          message: e.expose ? e.message : 'Something went wrong on our side.', code: e.code, requestId: ctx.state.requestId,
        }));
      }
    };
    /** The live server-side session the cookie names, looked up once per request; a dead cookie is cleared. */
    const sessionOf = async (ctx: Context): Promise<ConsoleSession | undefined> => {
      const state = ctx.state as ConsoleState;
      if (state.session === undefined) {
        const { id, oldKey } = sessionIdOf(ctx);
        state.session = (id && (await findSession(context.db, id))) || null;
        if (id && !state.session) clearSessionCookie(ctx, sessionOptions);
        else if (state.session && oldKey) writeSessionCookie(ctx, sessionOptions, state.session);
      }
      return state.session ?? undefined;
    };
    const bindingOf = async (ctx: Context) => {
      const session = await sessionOf(ctx);
      return session && sessionBinding(session);
    };
    const signedIn = async (ctx: Context, next: Next) => {
      const session = await sessionOf(ctx);
      if (!session) throw new AppError('unauthenticated', 'sign in first');
      if (!session.tenantId) return ctx.redirect(`${base}/organization`);
      const [user, role, tenants] = await Promise.all([
        findUserById(context.db, session.userId), membershipIn(context.db, session.userId, session.tenantId), membershipsOf(context.db, session.userId),
      ]);
      const tenant = tenants.find((m) => m.tenant_id === session.tenantId);
      if (!user || !role || !tenant) {
        await deleteSession(context.db, session.id);
        clearSessionCookie(ctx, sessionOptions);
        throw new AppError('unauthenticated', 'sign in again');
      }
      const site = ctx.get('sec-fetch-site');
      (ctx.state as ConsoleState).viewer = {
        userId: user.id, email: user.email, tenant: { id: tenant.tenant_id, slug: tenant.tenant_slug, name: tenant.tenant_name }, role, requestId: ctx.state.requestId,
        startedBy: site === 'cross-site' || site === 'same-site' ? site : undefined,
      };
      (ctx.state as ConsoleState).csrf = csrfToken(context.secrets.macKey, sessionBinding(session));
      (ctx.state as ConsoleState).organizations = tenants.length;
      await next();
    };
    const render = (ctx: Context, title: string, body: Html, current?: 'connections' | 'audit' | 'connect') => {
      const state = ctx.state as ConsoleState;
      const viewer = state.viewer;
      ctx.type = 'html';
      ctx.body = page({
        title, current, basePath: base,
        who: viewer ? { email: viewer.email, tenant: viewer.tenant.name, role: viewer.role, csrf: state.csrf!, switchable: (state.organizations ?? 1) > 1 } : undefined,
      }, body);
    };
    const pageContext = (ctx: Context): pages.PageContext => ({ base, csrf: (ctx.state as ConsoleState).csrf ?? '', describeScope, productTitle });
    const postForm = async (ctx: Context, binding: string | undefined) => {
      const form = await readForm(ctx);
      if (!binding) throw new AppError('csrf_failed', 'the form has expired; reload and try again');
      checkCsrf(ctx, context.secrets.macKey, binding, form.get('csrf'), api.origin);
      return form;
    };

    router.get(base, htmlErrors, takes([]), (ctx) => ctx.redirect(`${base}/connections`));
    router.get(`${base}/login`, htmlErrors, takes(['next', 'ended']), (ctx) => {
      // The browser's nonce is kept while it lives: a sign-in page opened in a second tab (or
      // reloaded) must not invalidate the form of the first one.
      const held = ctx.cookies.get(PRE_SESSION_COOKIE, { signed: true });
      const nonce = held && /^[A-Za-z0-9_-]{22}$/.test(held) ? held : randomBytes(16).toString('base64url');
      ctx.cookies.set(PRE_SESSION_COOKIE, nonce, { signed: true, httpOnly: true, sameSite: 'lax', path: base, maxAge: 3600_000 });
      (ctx.state as ConsoleState).csrf = csrfToken(context.secrets.macKey, `pre:${nonce}`);
      // The sign-in page always answers: a return path that is not a console page, or a reason it
      // does not know, is left out rather than refused.
      const next = returnPath(ctx.query.next as string | undefined);
      render(ctx, 'Sign in', pages.loginPage(pageContext(ctx), { next, notice: ENDED.get(ctx.query.ended as string) }));
    });
    router.post(`${base}/login`, htmlErrors, takes([]), async (ctx) => {
      const nonce = ctx.cookies.get(PRE_SESSION_COOKIE, { signed: true });
      const form = await postForm(ctx, nonce ? `pre:${nonce}` : undefined);
      // Counted under the address authenticate() looks up, as at the authorization server's sign-in (auth/interactions.ts).
      const email = normaliseEmail(form.get('email') ?? '');
      const next = returnPath(form.get('next') ?? undefined);
      (ctx.state as ConsoleState).csrf = csrfToken(context.secrets.macKey, `pre:${nonce}`);
      if (email.length > MAX_EMAIL_LENGTH) {
        ctx.status = 400;
        return render(ctx, 'Sign in', pages.loginPage(pageContext(ctx), { error: `An e-mail address has at most ${MAX_EMAIL_LENGTH} characters.`, next }));
      }
      // Counted before the password is checked, so a right guess over the limit is refused too.
      const retryAfter = signInAttempts.hit(`${ctx.ip}|${email}`);
      if (retryAfter) {
        ctx.set('Retry-After', String(retryAfter));
        ctx.status = 429;
        return render(ctx, 'Sign in', pages.loginPage(pageContext(ctx), { error: `Too many sign-in attempts. Wait ${plural(retryAfter, 'second')} and try again.`, email, next }));
      }
      const user = await authenticate(context.db, email, (form.get('password') ?? '').slice(0, 1024));
      if (!user) {
        ctx.status = 401;
        return render(ctx, 'Sign in', pages.loginPage(pageContext(ctx), { error: 'That e-mail and password do not match an account.', email, next }));
      }
      const memberships = await membershipsOf(context.db, user.id);
      if (!memberships.length) {
        ctx.status = 403;
        return render(ctx, 'Sign in', pages.loginPage(pageContext(ctx), { error: 'Your account is not a member of any active organization.', email, next }));
      }
      // The pre-session nonce stays (it grants nothing): another tab's sign-in form still works.
      await pruneExpiredSessions(context.db);
      const previous = sessionIdOf(ctx).id;
      if (previous) await deleteSession(context.db, previous);
      writeSessionCookie(ctx, sessionOptions, await createSession(context.db, { userId: user.id, tenantId: memberships.length === 1 ? memberships[0].tenant_id : undefined }));
      if (memberships.length === 1) await auditLogin(context, user.id, memberships[0].tenant_id, ctx.state.requestId);
      ctx.redirect(afterSignIn(next, memberships.length > 1));
    });
    router.get(`${base}/organization`, htmlErrors, takes(['next']), async (ctx) => {
      const session = await sessionOf(ctx);
      if (!session) throw new AppError('unauthenticated', 'sign in first');
      (ctx.state as ConsoleState).csrf = csrfToken(context.secrets.macKey, sessionBinding(session));
      // Switching (the header's link): the organization chosen now is the one selected.
      const next = returnPath(ctx.query.next as string | undefined);
      render(ctx, 'Choose an organization', pages.organizationPage(pageContext(ctx), await membershipsOf(context.db, session.userId), session.tenantId, next));
    });
    router.post(`${base}/organization`, htmlErrors, takes([]), async (ctx) => {
      const session = await sessionOf(ctx);
      if (!session) throw new AppError('unauthenticated', 'sign in first');
      const form = await postForm(ctx, sessionBinding(session));
      // As the consent page answers it (auth/interactions.ts): no choice is not someone else's organization.
      if (!form.get('tenant')) throw new AppError('invalid_request', 'Choose an organization.');
      const memberships = await membershipsOf(context.db, session.userId);
      const chosen = memberships.find((m) => m.tenant_slug === form.get('tenant'));
      if (!chosen) throw new AppError('forbidden', 'you are not a member of that organization');
      // A new session for the chosen organization (the old id is not carried into more privilege),
      // ending when the signed-in one would have.
      const chosenSession = await context.db.transaction(async (trx) => {
        await deleteSession(trx, session.id);
        return createSession(trx, { userId: session.userId, tenantId: chosen.tenant_id, expiresAt: session.expiresAt });
      });
      writeSessionCookie(ctx, sessionOptions, chosenSession);
      await auditLogin(context, session.userId, chosen.tenant_id, ctx.state.requestId);
      ctx.redirect(afterSignIn(returnPath(form.get('next') ?? undefined), false));
    });
    router.post(`${base}/logout`, htmlErrors, takes([]), async (ctx) => {
      const session = await sessionOf(ctx);
      // Already signed out (the session expired, or another tab ended it): there is nothing a
      // forged form could end, so the person simply lands on the sign-in page.
      if (!session) {
        clearSessionCookie(ctx, sessionOptions);
        return ctx.redirect(`${base}/login`);
      }
      await postForm(ctx, sessionBinding(session));
      // Ends the session on the server: a saved copy of the cookie names nothing any more.
      await deleteSession(context.db, session.id);
      clearSessionCookie(ctx, sessionOptions);
      ctx.redirect(`${base}/login`);
    });
    router.get(`${base}/connections`, htmlErrors, signedIn, takes(['revoked', 'cursor', 'notice']), async (ctx) => {
      const viewer = viewerOf(ctx);
      // Given once (takes); empty is absent, as for every page's parameters.
      const revoked = (ctx.query.revoked as string | undefined) || undefined;
      if (revoked !== undefined && revoked !== '1') throw new AppError('invalid_request', 'revoked must be 1 (show revoked connections too), or absent');
      const showRevoked = revoked === '1';
      const today = Math.floor(Date.now() / 86400000);
      const [connections, activity] = await Promise.all([
        connectionsFor(context.db, viewer, { includeRevoked: showRevoked, cursor: ctx.query.cursor }),
        dailyActivity(context.db, { tenantId: viewer.tenant.id, userId: viewer.role === 'admin' ? undefined : viewer.userId, from: (today - CHART_DAYS + 1) * 86400000 }),
      ]);
      const notice = typeof ctx.query.notice === 'string' ? NOTICES.get(ctx.query.notice) : undefined;
      render(ctx, 'Connections', pages.connectionsPage(pageContext(ctx), connections, { isAdmin: viewer.role === 'admin', showRevoked, notice, chart: [activity, CHART_DAYS, today] }), 'connections');
    });
    router.get(`${base}/connections/:id`, htmlErrors, signedIn, takes([]), async (ctx) => {
      const viewer = viewerOf(ctx);
      const connection = await connectionFor(context.db, viewer, ctx.params.id);
      // A member sees only their own records here too: an admin's revoke of their connection is not theirs.
      const own = viewer.role === 'admin' ? undefined : viewer.userId;
      const { rows } = await queryAudit(context.db, { tenantId: viewer.tenant.id, connectionId: connection.id, userId: own }, { limit: 20 });
      const people = await emailsOf(context.db, rows.map((r) => r.user_id));
      render(ctx, 'Connection', pages.connectionPage(pageContext(ctx), connection, rows, people, await revocationReason(context.db, connection)), 'connections');
    });
    router.get(`${base}/connections/:id/revoke`, htmlErrors, signedIn, takes([]), async (ctx) => {
      const connection = await connectionFor(context.db, viewerOf(ctx), ctx.params.id);
      render(ctx, 'Revoke connection', pages.revokePage(pageContext(ctx), connection, await revocationReason(context.db, connection)), 'connections');
    });
    router.post(`${base}/connections/:id/revoke`, htmlErrors, signedIn, takes([]), async (ctx) => {
      await postForm(ctx, await bindingOf(ctx));
      // A second press (Back, another tab) finds it revoked: revokeFor changes and records nothing then.
      const { revoked } = await revokeFor(context.db, options.events, viewerOf(ctx), ctx.params.id);
      ctx.redirect(`${base}/connections?notice=${revoked ? 'revoked' : 'already_revoked'}`);
    });
    router.get(`${base}/audit`, htmlErrors, signedIn, takes([...AUDIT_FILTERS, ...PAGE_PARAMS]), async (ctx) => {
      const viewer = viewerOf(ctx);
      // Read as the API reads them (a filter given twice is refused, not dropped); the links keep the filters given.
      const { rows, next, previous } = await auditFor(context.db, viewer, parseAuditQuery(viewer, ctx.query));
      const query = Object.fromEntries(Object.entries(ctx.query).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== ''));
      const people = await emailsOf(context.db, rows.map((r) => r.user_id));
      render(ctx, 'Audit log', pages.auditPage(pageContext(ctx), rows, { query, next, previous, isAdmin: viewer.role === 'admin', people }), 'audit');
    });
    router.get(`${base}/audit/export`, htmlErrors, signedIn, takes(['format', ...AUDIT_FILTERS]), async (ctx) => {
      // A GET carries the session cookie on another site's link too (SameSite=Lax), and an export
      // is recorded as taken by the person: it starts only from Portico's own pages, or typed in.
      refuseCrossSite(ctx, 'an export starts only from the console’s own pages');
      await sendExport(ctx, context, exports, viewerOf(ctx));
    });
    router.get(`${base}/audit/verify`, htmlErrors, signedIn, takes(['checkpoint']), async (ctx) => {
      const checkpoint = checkpointParam(ctx.query.checkpoint || undefined);
      render(ctx, 'Verify', pages.verifyPage(pageContext(ctx), await verifyFor(context, viewerOf(ctx), checkpoint), checkpoint), 'audit');
    });

    // "Connect a client" (issue 9): the client-config JSON for the live products, copy buttons by a hashed inline script.
    router.get(`${base}/connect`, htmlErrors, signedIn, takes(['product', 'read_only'], ['product']), async (ctx) => {
      const products = [ctx.query.product].flat().filter((p): p is string => typeof p === 'string' && p !== '');
      // Given once (takes): the same values as the HTTP endpoint's, anything else refused rather than read as "all scopes".
      const body = connectPage(options.catalog, config, { products, readOnly: readOnlyParameter(ctx.query.read_only as string | undefined) }, base);
      ctx.set('Content-Security-Policy', ctx.response.get('Content-Security-Policy').replace("default-src 'none';", `default-src 'none'; script-src ${COPY_SCRIPT_HASH};`));
      render(ctx, 'Connect a client', body, 'connect');
    });

    app.use(router.routes());
    // A console route asked with another method: 405 with Allow now (router.allowedMethods acts only
    // after next(), and the app's last middleware answers anything unclaimed with not_found first).
    // Pages answer with the console's error page and headers, the API (under /v1) with JSON.
    app.use(async (ctx, next) => {
      const matched = (ctx as Context & { matched?: Array<{ methods: string[] }> }).matched ?? [];
      const allowed = [...new Set(matched.flatMap((layer) => layer.methods))];
      // A mistyped page address gets the console's error page, not the JSON of an unknown API route.
      if (!allowed.length && (ctx.method === 'GET' || ctx.method === 'HEAD') && ctx.path !== base && isPagePath(ctx.path)) {
        return htmlErrors(ctx, async () => {
          throw new AppError('not_found', 'There is no such page in the console.');
        });
      }
      if (!allowed.length || allowed.includes(ctx.method)) return next();
      const refusal = new AppError('method_not_allowed', `${ctx.method} is not supported here; use ${allowed.filter((m) => m !== 'HEAD').join(' or ')}`, { headers: { Allow: allowed.join(', ') } });
      if (!isPagePath(ctx.path)) throw refusal;
      return htmlErrors(ctx, async () => {
        throw refusal;
      });
    });
  };
}

/**
 * The query parameters a route takes (checkQuery): any other, or one given twice unless
 * `repeatable`, is 400 invalid_request naming it, as JSON from the API and as the error page from a page.
 */
function takes(names: readonly string[], repeatable: readonly string[] = []) {
  return (ctx: Context, next: Next) => {
    checkQuery(ctx.query, names, repeatable);
    return next();
  };
}

interface ConsoleState extends PorticoState {
  viewer?: Viewer;
  csrf?: string;
  /** How many organizations the signed-in person can choose from (the header offers to switch when several). */
  organizations?: number;
  /** The cookie's server-side session; null once looked up and not found. */
  session?: ConsoleSession | null;
}

function securityHeaders(ctx: Context): void {
  ctx.set({
    'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'same-origin',
    'Cache-Control': 'no-store',
  });
}

async function auditLogin(context: PorticoContext, userId: string, tenantId: string, requestId: string): Promise<void> {
  await appendAudit(context.db, { tenantId, userId, kind: 'auth', name: 'console.sign_in', outcome: 'ok', requestId });
}

async function verifyFor(context: PorticoContext, viewer: Viewer, checkpoint?: Head) {
  requireScope(viewer, 'console.audit.read');
  if (viewer.role !== 'admin') throw new AppError('forbidden', 'only an admin can verify the whole audit chain');
  return verifyStoredChain(context.db, viewer.tenant.id, checkpoint);
}

/** `?checkpoint=seq:hash`: a chain end noted earlier, which the chain must still pass through. */
function checkpointParam(value: string | string[] | undefined): Head | undefined {
  if (value === undefined) return undefined;
  const checkpoint = typeof value === 'string' ? parseCheckpoint(value) : undefined;
  if (!checkpoint) throw new AppError('invalid_request', 'checkpoint must be <seq>:<hash>, a chain end as verification reported it (64 hex digits), given once');
  return checkpoint;
}

/**
 * The exports this instance is streaming, as shutdown sees them. Shutdown lets an export run
 * through its drain; one still streaming when the drain's time is up has its connection cut
 * (app.ts), and its second record, `unavailable`, is written before the pool closes.
 */
class ExportsUnderWay {
  /** Each export's end, settled once its second record (if it needs one) is written. */
  private readonly ends = new Set<Promise<void>>();
  /**
   * Shutdown has begun. A connection that closes before its export is whole is then taken as cut
   * by shutdown, though its client may have left on its own during the drain: the two look the
   * same here, and the log had better say a whole copy was not taken than miss one that was cut.
   */
  shuttingDown = false;

  constructor(context: PorticoContext) {
    context.onDrain(() => {
      this.shuttingDown = true;
    });
    // Once the drain is over every connection is closed, so every export's end is known.
    context.onDrained(async () => {
      await Promise.all(this.ends);
    });
  }

  /** Shutdown waits for `end` before the pool closes. */
  add(end: Promise<void>): void {
    this.ends.add(end);
    void end.finally(() => this.ends.delete(end));
  }
}

/**
 * Whether `body` went out whole on `response` (every byte handed to the connection), known once
 * the connection is done with it and the export reads no more: a body Koa never piped (the
 * connection closed while the first chunk was read) is stopped here.
 */
async function sentWhole(response: ServerResponse, body: Readable): Promise<boolean> {
  const whole = await finished(response).then(() => true, () => false);
  body.destroy();
  await finished(body).catch(() => undefined);
  return whole;
}

/**
 * Streams an export in constant memory. An admin's unfiltered export is the tenant's whole chain
 * in order, verifiable offline; a filtered one (or a member's) is a selection, oldest first.
 */
async function sendExport(ctx: Context, context: PorticoContext, exports: ExportsUnderWay, viewer: Viewer): Promise<void> {
  requireScope(viewer, 'console.audit.read');
  // Empty is absent (jsonl), as for the filters.
  const format = (ctx.query.format || 'jsonl') as string;
  if (format !== 'jsonl' && format !== 'csv') throw new AppError('invalid_request', 'format must be jsonl or csv');
  // The filters (the route takes nothing else: a listing's limit or cursor is refused, not ignored).
  const { format: _f, ...rest } = ctx.query;
  const query = parseAuditQuery(viewer, rest);
  // The same rule as the listing (auditFor): a connection of another organization or person is refused, not exported as empty.
  if (query.filter.connectionId) await connectionFor(context.db, { ...viewer, scopes: undefined }, query.filter.connectionId);
  const { tenantId, ...filters } = query.filter;
  const whole = Object.values(filters).every((v) => v === undefined);
  const pages = whole ? chainPages(context.db, tenantId) : auditPages(context.db, query.filter);
  const stamp = new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-');
  // Who asked for a copy of the organization's records, and when, is recorded in them, as a
  // revocation is: before the records are read, so a whole chain's export holds its own record.
  // Where the chain ended then is what `audit verify --file … --checkpoint <it>` checks a file against.
  // The filters as asked for, then what the export is (the route takes no `whole`: checkQuery).
  const record = { tenantId, userId: viewer.userId, product: 'console', kind: 'auth', name: 'audit.export', args: { ...rest, format, whole }, requestId: viewer.requestId } as const;
  const type = format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8';
  const disposition = `attachment; filename="portico-audit-${viewer.tenant.slug}-${stamp}.${format}"`;
  if (ctx.method === 'HEAD') {
    // Koa's router answers HEAD with the GET route; a HEAD takes no copy, so nothing is recorded or read.
    ctx.status = 200;
    ctx.type = type;
    ctx.set('Content-Disposition', disposition);
    ctx.set('X-Audit-Export', whole ? 'chain' : 'selection');
    return;
  }
  await appendAudit(context.db, { ...record, outcome: 'ok' });
  // An export that fails once begun, or is cut by shutdown, gets a second record with the code
  // (the failure's, or `unavailable`): the log must not say that a copy was taken whole when it was not.
  const endedShort = (code: string) => appendAudit(context.db, { ...record, outcome: code })
    .catch((auditError: unknown) => context.log.error('audit of a failed export failed', { request_id: viewer.requestId, err: auditError }));
  let ended!: () => void;
  exports.add(new Promise<void>((resolve) => (ended = resolve)));
  // The first chunk is read before the answer begins: a log that cannot be read is a 500 with
  // Portico's error body, logged with its request id, not a connection cut without an answer.
  const chunks = exportChunks(pages, format as ExportFormat);
  let head: Head | undefined;
  let first: IteratorResult<string>;
  try {
    head = whole ? await chainHead(context.db, tenantId) : undefined;
    first = await chunks.next();
  } catch (err) {
    await endedShort(translateDbError(err).code);
    ended();
    throw err;
  }
  ctx.type = type;
  ctx.set('Content-Disposition', disposition);
  ctx.set('X-Audit-Export', whole ? 'chain' : 'selection');
  if (head?.seq) ctx.set('X-Audit-Chain-Head', formatCheckpoint(head));
  const body = Readable.from(first.done ? [] : (async function* () {
    yield first.value;
    yield* chunks;
  })());
  // After the head is sent the connection can only be cut: the log keeps what happened. A client
  // that went away is not a failure of ours; shutdown cutting the connection is (`unavailable`,
  // as a tool call still running past the drain is: docs/errors.md).
  let failure: Error | undefined;
  body.once('error', (err: Error & { code?: string }) => {
    if (err.code === 'ERR_STREAM_PREMATURE_CLOSE') return; // the connection closed first
    context.log.error('audit export failed', { request_id: ctx.state.requestId, err });
    failure = err;
  });
  ctx.body = body;
  void sentWhole(ctx.res, body)
    .then(async (whole) => {
      if (failure) await endedShort(translateDbError(failure).code);
      else if (!whole && exports.shuttingDown) await endedShort('unavailable');
    })
    .finally(ended);
}

/** A true/false query parameter; absent (or empty, as every parameter) is false, anything else than those two words is refused. */
function flag(value: string | string[] | undefined, name: string): boolean {
  if (value === undefined || value === '') return false;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new AppError('invalid_request', `${name} must be true or false`);
}
