/**
 * Operator commands for OAuth clients: `client add` pre-registers a client (its id starts with
 * `reg_`, which no self-registered client can have), `client list` shows them, `client revoke`
 * cuts a client off everywhere at once (checklist J4) and `client remove` also deletes its
 * registration. And for the authorization server's keys: `keys list | add | activate | rotate |
 * retire`.
 */
import { randomBytes } from 'node:crypto';
import { onePositional, parseArgs } from '../shared/cli_args.js';
import type { JWK } from 'jose';
import type { Db, DbOrTrx } from '../db/connect.js';
import { appendAudit } from '../db/audit.js';
import { revocationEvents, revokeConnections, type DbConnectionRow } from '../db/grant_store.js';
import { cookieKeyFingerprint, describeInstance, liveInstances, LIVE_MS, type InstanceRow } from '../db/instances.js';
import { COOKIE_KEYS, generateCookieKey, keysInOrder, loadOrCreateCookieKeys, STAGES, updateRing, type KeyRing } from '../db/secrets.js';
import { generateSigningKeys, instanceKeysOf, loadOrCreateSigningKeys, sameKeys, SIGNING_KEYS } from './keys.js';
import { TTL } from './lifetimes.js';
import { AppError, UsageError } from '../shared/errors.js';
import type { AdminCommand } from '../scripts/admin.js';

// Client ids minted here start with this prefix (auth/clients.ts REGISTERED_PREFIX; kept literal so
// that listing clients does not load oidc-provider).
const REGISTERED_PREFIX = 'reg_';

const ADD_USAGE = 'client add --name <name> --redirect-uri <uri> [--redirect-uri <uri> ...] [--confidential]';

/**
 * Validates metadata exactly as the running server will when it loads the client: the same
 * normaliser and client schema of oidc-provider, so a stored client can never fail later.
 */
async function validateClient(db: Db, metadata: Record<string, unknown>): Promise<void> {
  const { default: Provider } = await import('oidc-provider');
  const { knexAdapter } = await import('./adapter.js');
  const { CLIENT_DEFAULTS, extraClientMetadata } = await import('./clients.js');
  const { loadOrCreateJwks } = await import('./keys.js');
  const provider = new Provider('http://localhost', {
    adapter: knexAdapter(db, { refreshReuseGraceMs: 0 }),
    jwks: (await loadOrCreateJwks(db)) as import('oidc-provider').Configuration['jwks'],
    clientDefaults: CLIENT_DEFAULTS,
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
    responseTypes: ['code'],
    extraClientMetadata: extraClientMetadata(),
    features: { devInteractions: { enabled: false } },
  });
  try {
    await (provider.Client as unknown as { validate(m: Record<string, unknown>): Promise<void> }).validate(metadata);
  } catch (error) {
    const description = (error as { error_description?: string }).error_description ?? 'invalid client metadata';
    throw new AppError('invalid_request', description, { cause: error });
  }
}

/** Where an operator finds the client id a command needs. */
const CLIENT_HINT = 'client list --all shows them';

export const CLIENT_COMMANDS: Record<string, AdminCommand> = {
  'client add': {
    usage: ADD_USAGE,
    async run(open, args, { out }) {
      const { values } = parseArgs({
        args,
        options: { name: { type: 'string' }, 'redirect-uri': { type: 'string', multiple: true }, confidential: { type: 'boolean' } },
      });
      const name = values.name?.trim();
      const redirectUris = values['redirect-uri'] ?? [];
      if (!name || !redirectUris.length) throw new UsageError(`client add needs ${[!name && '--name', !redirectUris.length && '--redirect-uri'].filter(Boolean).join(' and ')}`);
      const { classifyRedirectUri, clientNameProblem, MAX_REDIRECT_URIS, newClientId } = await import('./clients.js');
      const nameProblem = clientNameProblem(name);
      if (nameProblem) throw new AppError('invalid_request', nameProblem);
      if (redirectUris.length > MAX_REDIRECT_URIS) throw new AppError('invalid_request', `at most ${MAX_REDIRECT_URIS} redirect URIs`);
      for (const uri of redirectUris) {
        const kind = classifyRedirectUri(uri);
        if (typeof kind !== 'string') throw new AppError('invalid_request', kind.problem);
      }
      const clientId = newClientId(REGISTERED_PREFIX);
      const secret = values.confidential ? randomBytes(32).toString('base64url') : undefined;
      const metadata: Record<string, unknown> = {
        client_id: clientId,
        client_name: name,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: secret ? 'client_secret_basic' : 'none',
        client_id_issued_at: Math.floor(Date.now() / 1000),
        ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
      };
      const db = await open();
      await validateClient(db, metadata);
      await db.transaction(async (trx) => {
        await trx('oidc_payloads').insert({ model: 'Client', id: clientId, client_id: clientId, payload: JSON.stringify(metadata), expires_at: null, created_at: Date.now() });
        await appendAudit(trx, { tenantId: null, clientId, kind: 'admin', name: 'client.add', args: { name, redirect_uris: redirectUris, confidential: !!secret }, outcome: 'ok' });
      });
      out(`client_id: ${clientId}`);
      if (secret) out(`client_secret: ${secret}   (shown once; store it now)`);
      out(`token_endpoint_auth_method: ${metadata.token_endpoint_auth_method}`);
    },
  },

  'client list': {
    usage: 'client list [--all]',
    async run(open, args, { out }) {
      const { values } = parseArgs({ args, options: { all: { type: 'boolean' } } });
      const db = await open();
      const query = db('oidc_payloads').where({ model: 'Client' }).orderBy('id').select('id', 'payload');
      if (!values.all) query.where('id', 'like', `${REGISTERED_PREFIX}%`);
      const rows: Array<{ id: string; payload: string }> = await query;
      if (!rows.length) return out(values.all ? 'no clients' : 'no registered clients (use --all to include self-registered ones)');
      for (const row of rows) {
        const metadata = JSON.parse(row.payload) as { client_name?: string; redirect_uris?: string[]; token_endpoint_auth_method?: string };
        const kind = row.id.startsWith(REGISTERED_PREFIX) ? 'registered' : 'self-registered';
        out(`${row.id.padEnd(28)} ${(metadata.client_name ?? '').padEnd(24)} ${kind.padEnd(16)} ${(metadata.token_endpoint_auth_method ?? 'none').padEnd(20)} ${(metadata.redirect_uris ?? []).join(' ')}`);
      }
    },
  },

  'client revoke': {
    usage: 'client revoke <client_id>   (revokes its connections in every organization; people may connect it again)',
    async run(open, args, { out, notify }) {
      const clientId = onePositional(args, 'client revoke', 'a client id', CLIENT_HINT);
      const db = await open();
      const { name, revoked } = await db.transaction(async (trx) => {
        const { name } = await requireClient(trx, clientId);
        return { name, revoked: await revokeEverywhere(trx, clientId, name, { record: 'client.revoke', reason: 'client revoked by an operator' }) };
      });
      await notify(revocationEvents(revoked));
      out(revoked.length ? `revoked ${revoked.length} connection(s) of ${name}${inOrganizations(revoked)}` : `${name} has no live connections`);
    },
  },

  'client remove': {
    usage: 'client remove <client_id>   (revokes its connections everywhere and deletes its registration)',
    async run(open, args, { out, notify }) {
      const clientId = onePositional(args, 'client remove', 'a client id', CLIENT_HINT);
      const { clientKindOf } = await import('./clients.js');
      if (clientKindOf(clientId) === 'metadata_document') {
        throw new AppError('invalid_request', `${clientId} is a metadata-document client: its id is the URL of its metadata, which Portico fetches when it connects, so there is no registration to remove; client revoke revokes its connections`);
      }
      const db = await open();
      const { name, revoked } = await db.transaction(async (trx) => {
        const { name, registered } = await requireClient(trx, clientId);
        if (!registered) throw new AppError('not_found', `no registered client ${clientId} (${await liveNote(trx, clientId)})`);
        const revoked = await revokeEverywhere(trx, clientId, name, { record: 'client.remove', reason: 'client removed by an operator' });
        // Its registration and what belongs to it. Access tokens stay, marked revoked (revokeConnection),
        // so a client still holding one is told its connection was revoked, not that the token is unknown.
        await trx('oidc_payloads').where({ client_id: clientId }).whereNot('model', 'AccessToken').delete();
        return { name, revoked };
      });
      await notify(revocationEvents(revoked));
      out(`removed ${name}${revoked.length ? `; revoked ${revoked.length} connection(s)${inOrganizations(revoked)}` : ''}`);
    },
  },
};

/**
 * The client's name as people saw it, and whether Portico holds its registration. A client known
 * only by its connections (a metadata-document client, or one whose registration is gone) is
 * found too; one never registered and never connected is not_found.
 */
async function requireClient(trx: DbOrTrx, clientId: string): Promise<{ name: string; registered: boolean }> {
  const row: { payload: string } | undefined = await trx('oidc_payloads').where({ model: 'Client', id: clientId }).first('payload');
  const metadata = row ? (JSON.parse(row.payload) as { client_name?: string }) : undefined;
  const connection: { client_name: string | null } | undefined = await trx('connections').where({ client_id: clientId }).orderBy('created_at', 'desc').first('client_name');
  if (!row && !connection) throw new AppError('not_found', `no client ${clientId} (client list --all shows them)`);
  const name = metadata?.client_name ?? connection?.client_name;
  return { name: name ? `${name} (${clientId})` : clientId, registered: !!row };
}

/**
 * Revokes the client's live connections in every organization, each recorded in its own
 * organization's audit log (revokeConnection), and records the command in the system log.
 */
async function revokeEverywhere(trx: DbOrTrx, clientId: string, name: string, { record, reason }: { record: string; reason: string }): Promise<DbConnectionRow[]> {
  // In organization order, as the other commands that revoke in several take the audit chains' heads.
  const live: DbConnectionRow[] = await trx('connections').where({ client_id: clientId }).whereNull('revoked_at').orderBy(['tenant_id', 'id']).select('*');
  const revoked = await revokeConnections(trx, live, reason);
  await appendAudit(trx, { tenantId: null, clientId, kind: 'admin', name: record, args: { client: name, revoked_connections: revoked.length }, outcome: 'ok' });
  return revoked;
}

/** For a client with no registration to remove: what is left of it that client revoke would reach. */
async function liveNote(trx: DbOrTrx, clientId: string): Promise<string> {
  const row = await trx('connections').where({ client_id: clientId }).whereNull('revoked_at').count({ n: '*' }).first();
  const live = Number(row?.n ?? 0);
  return live ? `${live} live connection(s) of it remain: client revoke revokes them` : 'none of its connections is live';
}

/** ` in <n> organization(s)`: how widely a client's revocation reached. */
function inOrganizations(revoked: DbConnectionRow[]): string {
  const organizations = new Set(revoked.map((c) => c.tenant_id)).size;
  return ` in ${organizations} organization(s)`;
}

const STAGE_NOTES = 'current keys sign; next keys are published and sign after keys activate; previous keys only verify until keys retire. Each instance reads its keys when it starts.';

/** One stage of a rotation, the same for the signing and the cookie keys (`fresh`: new keys, when the step adds some). */
type Step = <K>(ring: KeyRing<K>, fresh: K[]) => KeyRing<K>;

const add: Step = (ring, fresh) => {
  if (ring.next.length) throw new AppError('conflict', 'new keys already wait to be activated (keys list shows them): restart every instance, then run keys activate');
  return { ...ring, next: fresh };
};

const activate: Step = (ring) => {
  if (!ring.next.length) throw new AppError('conflict', 'no new keys to activate: run keys add, restart every instance, then keys activate');
  return { current: ring.next, next: [], previous: [...ring.previous, ...ring.current] };
};

const retire: Step = (ring) => ({ ...ring, previous: [] });

interface Stepped {
  signing: { before: KeyRing<JWK>; after: KeyRing<JWK> };
  cookies: { before: KeyRing<string>; after: KeyRing<string> };
}

/** Refuses (AppError conflict) a step that would let a running instance sign with a key another running instance does not publish. */
type Guard = (stepped: Stepped, running: InstanceRow[]) => void;

const describeAll = (instances: InstanceRow[]) => instances.map(describeInstance).join('; ');

/** Activation makes the added keys sign: every running instance must publish them, and read the added cookie key, first. */
const everyInstancePublishesNext: Guard = ({ signing, cookies }, running) => {
  const added = kidList(signing.before.next);
  const addedCookies = cookies.before.next.map(cookieKeyFingerprint);
  const behind = running.filter((instance) => !added.every((kid) => instance.keys.published.includes(kid)) || !addedCookies.every((f) => instance.keys.cookieVerify.includes(f)));
  if (behind.length) {
    throw new AppError('conflict', `not every running instance publishes the added keys yet: restart ${describeAll(behind)}, then run keys activate again`);
  }
};

/** Retiring unpublishes the replaced keys: no running instance may still sign with them. */
const noInstanceSignsWithPrevious: Guard = ({ signing, cookies }, running) => {
  const replaced = kidList(signing.before.previous);
  const replacedCookies = cookies.before.previous.map(cookieKeyFingerprint);
  const behind = running.filter((instance) => instance.keys.signing.some((kid) => replaced.includes(kid)) || replacedCookies.includes(instance.keys.cookieSign));
  if (behind.length) {
    throw new AppError('conflict', `a running instance still signs with the keys keys activate replaced: restart ${describeAll(behind)}, then run keys retire again`);
  }
};

/** Add and activate at once is safe only where no other instance could miss the new keys. */
const atMostOneInstance: Guard = (_stepped, running) => {
  if (running.length > 1) {
    throw new AppError('conflict', `${running.length} instances are running (${describeAll(running)}): rotate in stages instead (keys add, restart each instance, keys activate, restart each instance)`);
  }
};

/**
 * Takes one step on both rings in one transaction, with its record in the system audit log (key
 * ids, never key material; no record when `recorded` returns undefined: nothing changed).
 * `withFresh`: the step adds new keys. `guard` sees the rings before and after, and the instances
 * running now (db/instances.ts: an instance that stopped without saying so counts for LIVE_MS).
 */
async function stepKeys(db: Db, name: string, step: Step, withFresh: boolean, recorded: (stepped: Stepped) => Record<string, unknown> | undefined, guard?: Guard): Promise<Stepped> {
  const fresh = withFresh ? { signing: await generateSigningKeys(), cookies: [generateCookieKey()] } : { signing: [], cookies: [] };
  // Both rings exist from an instance's first start; a command run before it creates them, first.
  await loadOrCreateSigningKeys(db);
  await loadOrCreateCookieKeys(db);
  return db.transaction(async (trx) => {
    const stepped: Stepped = {
      signing: await updateRing(trx, SIGNING_KEYS, (ring) => step(ring, fresh.signing)),
      cookies: await updateRing(trx, COOKIE_KEYS, (ring) => step(ring, fresh.cookies)),
    };
    guard?.(stepped, await liveInstances(trx));
    const args = recorded(stepped);
    if (args) await appendAudit(trx, { tenantId: null, kind: 'admin', name, args, outcome: 'ok' });
    return stepped;
  });
}

/** Whether an instance runs with the rings as stored: it publishes and signs with what they say, and reads every cookie key. */
function tookUp(instance: InstanceRow, signing: KeyRing<JWK>, cookies: KeyRing<string>): boolean {
  return sameKeys(instance.keys, instanceKeysOf(signing, keysInOrder(cookies)));
}

const kids = (keys: JWK[]) => keys.map((key) => `${key.kid} (${key.alg})`).join(', ');
// Every stored key has a kid (SIGNING_KEYS.isKey).
const kidList = (keys: JWK[]) => keys.map((key) => key.kid!);

/** When the replaced keys can go: once nothing they signed is still live. */
const RETIRE_ADVICE = `The keys they replace still verify; run keys retire once ID tokens (${TTL.IdToken / 3600} h) and sign-ins (${TTL.Session / 3600} h) made before the restart have expired.`;

/**
 * Key rotation (checklist R14), staged so that no instance ever signs with a key another instance
 * does not publish: `keys add` (every instance publishes the new keys once restarted), `keys
 * activate` (they sign, once restarted; the old ones still verify), `keys retire` (the old ones
 * go). `keys rotate` is add and activate at once, for a single instance. Access and refresh tokens
 * are opaque, so none of this touches them; signing keys sign ID tokens. Cookie keys rotate
 * alongside, so browser sign-ins outlive the rotation until the old keys are retired.
 */
export const KEY_COMMANDS: Record<string, AdminCommand> = {
  'keys list': {
    usage: 'keys list',
    async run(open, args, { out }) {
      parseArgs({ args, options: {} });
      const db = await open();
      const signing = await loadOrCreateSigningKeys(db);
      const cookies = await loadOrCreateCookieKeys(db);
      for (const stage of STAGES) for (const key of signing[stage]) out(`${stage.padEnd(9)} ${String(key.alg).padEnd(6)} ${key.kid}`);
      out(`cookie keys: ${STAGES.map((stage) => `${cookies[stage].length} ${stage}`).join(', ')}`);
      const running = await liveInstances(db);
      out(running.length ? `running instances (seen in the last ${LIVE_MS / 1000} s):` : `no running instance seen in the last ${LIVE_MS / 1000} s`);
      for (const instance of running) out(`  ${describeInstance(instance)}: ${tookUp(instance, signing, cookies) ? 'has the stored keys' : 'restart it to take up the stored keys'}`);
      out(STAGE_NOTES);
    },
  },
  'keys add': {
    usage: 'keys add      (new signing and cookie keys, published from each instance\'s next start; then keys activate)',
    async run(open, args, { out }) {
      parseArgs({ args, options: {} });
      const db = await open();
      const { signing } = await stepKeys(db, 'keys.add', add, true, ({ signing }) => ({ kids: kidList(signing.after.next) }));
      out(`added signing keys ${kids(signing.after.next)} and a cookie key. Restart every instance, so that each publishes them, then run keys activate.`);
    },
  },
  'keys activate': {
    usage: 'keys activate (the added keys sign from each instance\'s next start; the old ones still verify)',
    async run(open, args, { out }) {
      parseArgs({ args, options: {} });
      const db = await open();
      const { signing } = await stepKeys(db, 'keys.activate', activate, false, ({ signing }) => ({ kids: kidList(signing.after.current) }), everyInstancePublishesNext);
      out(`activated signing keys ${kids(signing.after.current)}. Restart every instance, so that each signs with them. ${RETIRE_ADVICE}`);
    },
  },
  'keys rotate': {
    usage: 'keys rotate   (keys add and keys activate at once, for a single instance; then restart it)',
    async run(open, args, { out }) {
      parseArgs({ args, options: {} });
      const db = await open();
      const { signing } = await stepKeys(db, 'keys.rotate', (ring, fresh) => activate(add(ring, fresh), []), true, ({ signing }) => ({ kids: kidList(signing.after.current) }), atMostOneInstance);
      out(`rotated: signing keys ${kids(signing.after.current)} and a new cookie key sign from the instance's next start; restart it. ${RETIRE_ADVICE}`);
    },
  },
  'keys retire': {
    usage: 'keys retire   (drops the keys keys activate replaced; sign-ins and ID tokens they signed end)',
    async run(open, args, { out }) {
      parseArgs({ args, options: {} });
      const db = await open();
      const { signing, cookies } = await stepKeys(db, 'keys.retire', retire, false, ({ signing, cookies }) =>
        signing.before.previous.length || cookies.before.previous.length ? { kids: kidList(signing.before.previous), cookie_keys: cookies.before.previous.length } : undefined, noInstanceSignsWithPrevious);
      if (!signing.before.previous.length && !cookies.before.previous.length) return out('no previous keys to retire');
      out(`retired signing keys ${kids(signing.before.previous) || '(none)'} and ${cookies.before.previous.length} cookie key(s). Restart every instance, so that each stops publishing them.`);
    },
  },
};
