/**
 * Key rotation (checklist R14): `keys add`, `keys activate` and `keys retire` move the signing and
 * cookie keys through their stages, each taking effect when an instance restarts. What was signed
 * before keeps verifying until the old keys are retired; access and refresh tokens, which are
 * opaque, are never touched.
 */
import os from 'node:os';
import test, { type ExecutionContext } from 'ava';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { chainRows, verifyChain } from '../../db/audit.js';
import type { Db } from '../../db/connect.js';
import { liveInstances, LIVE_MS, registerInstance } from '../../db/instances.js';
import { authenticateBearer } from '../../db/grant_store.js';
import { COOKIE_KEYS, generateCookieKey, keysInOrder, loadOrCreateCookieKeys, parseRing, type RingKind } from '../../db/secrets.js';
import { generateSigningKeys, loadOrCreateSigningKeys, SIGNING_KEYS } from '../../auth/keys.js';
import { runAdmin } from '../../scripts/admin.js';
import { createMigratedDatabase, createTestDatabase, databasesUnderTest, testOnEachDatabase, type TestDatabase } from '../helpers/db.js';
import { authorizeCode, follow, refresh, startAuthorization, tokenRequest, type CookieJar } from '../helpers/oauth.js';
import { freePort } from '../helpers/server.js';
import { PASSWORD, startAuthServer, type AuthServer } from './support.js';

async function admin(database: TestDatabase, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, { DATABASE_URL: database.url });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** A real authorization with `openid`: the ID token (signed by the current key), the tokens, and the browser's cookies. */
async function signInWithIdToken(server: AuthServer) {
  const flow = await authorizeCode(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes: ['openid', 'forge.chat.read'] });
  const response = await tokenRequest(server.url, {
    grant_type: 'authorization_code', code: flow.code, client_id: flow.clientId, redirect_uri: flow.redirectUri, code_verifier: flow.verifier, resource: server.forge,
  });
  const body = (await response.json()) as { id_token?: string; access_token: string; refresh_token: string };
  if (response.status !== 200 || !body.id_token) throw new Error(`no ID token: ${response.status} ${JSON.stringify(body)}`);
  return { idToken: body.id_token, accessToken: body.access_token, refreshToken: body.refresh_token, clientId: flow.clientId, jar: flow.jar };
}

async function publishedKeys(server: AuthServer): Promise<JSONWebKeySet> {
  return (await (await fetch(`${server.url}/oauth/jwks`)).json()) as JSONWebKeySet;
}

/** Whether `idToken` verifies against the server's published keys, as a relying party checks it. */
async function verifies(server: AuthServer, idToken: string, clientId: string): Promise<boolean> {
  try {
    await jwtVerify(idToken, createLocalJWKSet(await publishedKeys(server)), { issuer: server.url, audience: clientId });
    return true;
  } catch {
    return false;
  }
}

/** Whether a new authorization with this browser's cookies asks for the password again (its sign-in did not survive). */
async function asksForPassword(server: AuthServer, clientId: string, jar: CookieJar): Promise<boolean> {
  const auth = await startAuthorization(server.url, { clientId, resource: server.forge, scopes: ['forge.chat.read'], jar });
  const page = await follow(server.url, jar, auth.response);
  return /name="password"/.test(page.html ?? '');
}

function kidOf(idToken: string): string {
  return decodeProtectedHeader(idToken).kid!;
}

const UUID = '[0-9a-f-]{36}';

async function storedRings(db: Db) {
  return db('secrets').whereIn('name', ['jwks', 'cookie_keys']).orderBy('name').select('name', 'value');
}

function assertRefused(t: ExecutionContext, result: { code: number; out: string; err: string }, message: RegExp): void {
  t.is(result.code, 1, result.err);
  t.is(result.out, '');
  t.regex(result.err, message);
}

for (const kind of databasesUnderTest()) {
  test(`keys rotate in stages across restarts: what was signed before verifies until retired; tokens and sign-ins survive [${kind}]`, async (t) => {
    t.timeout(120_000);
    const database = await createTestDatabase(kind);
    const port = await freePort();
    const env = { PORT: String(port), PUBLIC_AUTH_URL: `http://127.0.0.1:${port}` };
    let server = await startAuthServer(kind, { database, env });
    const restart = async () => {
      await server.stop();
      // Let this process's fetch see the stopped server's kept-alive sockets close (as in lifecycle.test.ts).
      for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
      server = await startAuthServer(kind, { database, env, seed: false });
    };
    try {
      const before = await signInWithIdToken(server);
      const oldKid = kidOf(before.idToken);
      t.true(await verifies(server, before.idToken, before.clientId));
      const keysBefore = (await publishedKeys(server)).keys.map((key) => key.kid);

      // keys add: published by every instance once restarted, but nothing signs with them yet.
      const added = await admin(database, 'keys', 'add');
      t.is(added.code, 0, added.err);
      const newKids = [...added.out.matchAll(/([0-9a-f-]{36}) \((ES256|RS256)\)/g)].map((m) => m[1]);
      t.is(newKids.length, 2, added.out);
      t.deepEqual((await publishedKeys(server)).keys.map((key) => key.kid), keysBefore, 'a running instance changes nothing until it restarts');
      // Activating now would let a restarted instance sign with keys this one does not publish.
      const stored = await storedRings(server.portico.context.db);
      const early = await admin(database, 'keys', 'activate');
      assertRefused(t, early, new RegExp(`^error: not every running instance publishes the added keys yet: restart instance ${UUID} \\(${os.hostname()}, pid ${process.pid}, started [^)]+\\), then run keys activate again$`));
      t.deepEqual(await storedRings(server.portico.context.db), stored, 'the refused activation wrote nothing');
      t.regex((await admin(database, 'keys', 'list')).out, /running instances \(seen in the last 30 s\):\n {2}instance .*: restart it to take up the stored keys\n/);
      await restart();
      t.regex((await admin(database, 'keys', 'list')).out, /running instances \(seen in the last 30 s\):\n {2}instance .*: has the stored keys\n/, 'the old instance left when it stopped');
      const published = (await publishedKeys(server)).keys;
      t.deepEqual(published.map((key) => key.kid), [...keysBefore, ...newKids], 'the new keys are published after the current ones');
      for (const key of published.filter((k) => newKids.includes(k.kid!))) t.deepEqual(key.key_ops, ['verify'], 'an added key only verifies');
      t.false(published.some((key) => 'd' in key), 'no private part is published');
      const waiting = await signInWithIdToken(server);
      t.is(kidOf(waiting.idToken), oldKid, 'the current key still signs');
      t.false(await asksForPassword(server, before.clientId, before.jar), 'the sign-in of before the restart is still valid');

      // keys activate: after a restart the new keys sign; the old ones still verify, and the old cookie key still reads sign-ins.
      const activated = await admin(database, 'keys', 'activate');
      t.is(activated.code, 0, activated.err);
      t.regex(activated.out, /run keys retire once ID tokens \(1 h\) and sign-ins \(12 h\)/);
      // Retiring now would unpublish the keys this instance still signs with.
      assertRefused(t, await admin(database, 'keys', 'retire'), /^error: a running instance still signs with the keys keys activate replaced: restart instance .*, then run keys retire again$/);
      await restart();
      const after = await signInWithIdToken(server);
      t.true(newKids.includes(kidOf(after.idToken)), 'a new key signs');
      t.true(await verifies(server, after.idToken, after.clientId));
      t.true(await verifies(server, before.idToken, before.clientId), 'an ID token signed before the rotation still verifies');
      t.false(await asksForPassword(server, before.clientId, before.jar), 'a sign-in made with the old cookie key is still read');
      const { db } = server.portico.context;
      t.is((await authenticateBearer(db, before.accessToken, server.forge)).user.email, 'alice@acme.example', 'access tokens are opaque: untouched');
      t.truthy((await refresh(server.url, { refreshToken: before.refreshToken, clientId: before.clientId, resource: server.forge })).accessToken, 'so are refresh tokens');

      // keys retire: after a restart the old keys are gone, and with them what only they could verify.
      const retired = await admin(database, 'keys', 'retire');
      t.is(retired.code, 0, retired.err);
      t.regex(retired.out, new RegExp(`^retired signing keys .*${oldKid} \\(RS256\\)`));
      await restart();
      t.deepEqual((await publishedKeys(server)).keys.map((key) => key.kid).sort(), [...newKids].sort());
      t.false(await verifies(server, before.idToken, before.clientId), 'an ID token signed by a retired key no longer verifies');
      t.true(await verifies(server, after.idToken, after.clientId));
      t.true(await asksForPassword(server, waiting.clientId, waiting.jar), 'a sign-in signed only with a retired cookie key has ended');
      t.false(await asksForPassword(server, before.clientId, before.jar), 'one used after the activation was signed again with the new key and goes on');
      t.false(await asksForPassword(server, after.clientId, after.jar), 'so does one made after the rotation');
      t.is((await admin(database, 'keys', 'retire')).out, 'no previous keys to retire');

      // Every step is in the system audit log, which still verifies; no key material is in it.
      const current = server.portico.context.db;
      const records = await current('audit_log').whereNull('tenant_id').where('name', 'like', 'keys.%').orderBy('seq').select('name', 'args_redacted');
      t.deepEqual(records.map((r) => r.name), ['keys.add', 'keys.activate', 'keys.retire']);
      t.false(records.some((r) => /"d"|"p"|"q"/.test(String(r.args_redacted))), 'no private key parameter is recorded');
      t.true((await verifyChain(chainRows(current, null))).ok, 'the system chain verifies');
    } finally {
      await server.stop();
      await database.drop();
    }
  });
}

testOnEachDatabase('keys commands refuse what is out of order and write nothing; keys rotate is add and activate at once', async (t, database) => {
  const { db } = database;
  const secrets = async () => db('secrets').whereIn('name', ['jwks', 'cookie_keys']).orderBy('name').select('name', 'value');
  const listed = await admin(database, 'keys', 'list');
  t.is(listed.code, 0, listed.err);
  t.regex(listed.out, /^current {3}ES256 {2}[0-9a-f-]{36}\ncurrent {3}RS256 {2}[0-9a-f-]{36}\ncookie keys: 2 current, 0 next, 0 previous\n/);

  const untouched = await secrets();
  assertRefused(t, await admin(database, 'keys', 'activate'), /^error: no new keys to activate: run keys add/);
  t.deepEqual(await secrets(), untouched);
  // Two operators adding at once take turns on the ring: one adds, the other is refused.
  const both = await Promise.all([admin(database, 'keys', 'add'), admin(database, 'keys', 'add')]);
  t.deepEqual(both.map((r) => r.code).sort(), [0, 1], JSON.stringify(both));
  t.is(parseRing(SIGNING_KEYS, (await secrets())[1].value).next.length, 2, 'one set of keys waits');
  const staged = await secrets();
  assertRefused(t, await admin(database, 'keys', 'add'), /^error: new keys already wait to be activated \(keys list shows them\): restart every instance, then run keys activate$/);
  assertRefused(t, await admin(database, 'keys', 'rotate'), /already wait to be activated/);
  t.deepEqual(await secrets(), staged, 'a refused add or rotate writes nothing');
  const usage = await admin(database, 'keys', 'add', '--now');
  t.is(usage.code, 2);
  t.regex(usage.err, /Unknown option '--now'[\s\S]*usage: npm run admin -- keys add/);

  t.is((await admin(database, 'keys', 'activate')).code, 0);
  t.is((await admin(database, 'keys', 'retire')).code, 0);
  const [cookies, jwks] = await secrets();
  const before = { signing: parseRing(SIGNING_KEYS, jwks.value), cookies: parseRing(COOKIE_KEYS, cookies.value) };
  const rotated = await admin(database, 'keys', 'rotate');
  t.is(rotated.code, 0, rotated.err);
  const [cookiesAfter, jwksAfter] = await secrets();
  const signing = parseRing(SIGNING_KEYS, jwksAfter.value);
  const cookieRing = parseRing(COOKIE_KEYS, cookiesAfter.value);
  t.deepEqual(signing.previous, before.signing.current, 'the replaced keys still verify');
  t.deepEqual(signing.next, []);
  t.is(signing.current.length, 2);
  t.false(signing.current.some((key) => before.signing.current.some((old) => old.kid === key.kid)));
  t.deepEqual(cookieRing.previous, before.cookies.current);
  t.is(keysInOrder(cookieRing)[0], cookieRing.current[0], 'the new cookie key signs');
  t.notDeepEqual(cookieRing.current, before.cookies.current);
});

testOnEachDatabase('keys stored before rotation existed (a bare JWKS, a list of cookie keys) are read as the current keys', async (t, database) => {
  const { db } = database;
  const jwks = await generateSigningKeys();
  const cookies = [generateCookieKey(), generateCookieKey()];
  await db('secrets').insert([
    { name: 'jwks', value: JSON.stringify({ keys: jwks }), created_at: Date.now() },
    { name: 'cookie_keys', value: JSON.stringify(cookies), created_at: Date.now() },
  ]);
  t.deepEqual(await loadOrCreateSigningKeys(db), { current: jwks, next: [], previous: [] });
  t.deepEqual(await loadOrCreateCookieKeys(db), { current: cookies, next: [], previous: [] });
});

test('a stored ring an instance could not sign with is refused, naming the secret', (t) => {
  const key = generateCookieKey();
  const refusals: Array<[RingKind<unknown>, string, string]> = [
    [COOKIE_KEYS, 'not json', 'not JSON'],
    [COOKIE_KEYS, '[]', 'no current key'],
    [SIGNING_KEYS, JSON.stringify({ keys: [] }), 'no current key'],
    [SIGNING_KEYS, JSON.stringify({ current: [], next: [], previous: [] }), 'no current key'],
    [COOKIE_KEYS, JSON.stringify({ current: [key], next: [] }), 'no current, next and previous keys'],
    [COOKIE_KEYS, JSON.stringify({ current: [key, 1, null], next: [], previous: [] }), 'a key of the wrong form'],
    [SIGNING_KEYS, JSON.stringify({ current: [{ kty: 'oct', kid: 'k', k: 'x' }], next: [], previous: [] }), 'a key of the wrong form'],
    [SIGNING_KEYS, JSON.stringify({ current: [key], next: [], previous: [] }), 'a key of the wrong form'],
    [SIGNING_KEYS, 'null', 'no current, next and previous keys'],
  ];
  for (const [kind, stored, why] of refusals) {
    t.throws(() => parseRing(kind, stored), { message: `the stored secret "${kind.name}" is not a key ring (${why})` }, stored);
  }
  t.deepEqual(parseRing(COOKIE_KEYS, JSON.stringify([key])), { current: [key], next: [], previous: [] });
});

for (const kind of databasesUnderTest()) {
  test(`the first keys commands on a database without keys take turns too: one adds, the other is refused [${kind}]`, async (t) => {
    // The rings are created before the command's transaction: a PostgreSQL transaction could not go on after losing that race.
    for (let round = 0; round < 3; round++) {
      const database = await createMigratedDatabase(kind);
      try {
        const both = await Promise.all([admin(database, 'keys', 'add'), admin(database, 'keys', 'add')]);
        t.deepEqual(both.map((r) => r.code).sort(), [0, 1], JSON.stringify(both));
        t.regex(both.find((r) => r.code === 1)!.err, /^error: new keys already wait to be activated/);
      } finally {
        await database.drop();
      }
    }
  });
}

testOnEachDatabase('running instances are known to the keys commands: kept seen while they run, gone when they stop, ignored once silent', async (t, database) => {
  const { db } = database;
  const keys = { published: ['k1'], signing: ['k1'], cookieVerify: ['c1'], cookieSign: 'c1' };
  const failures: unknown[] = [];
  const gone = { id: 'left-two-days-ago', host: 'old', pid: 1, started_at: Date.now() - 3 * 86_400_000, seen_at: Date.now() - 2 * 86_400_000, keys: JSON.stringify(keys) };
  await db('instances').insert(gone);
  const first = await registerInstance(db, keys, (error) => failures.push(error), 40);
  // The second never beats during the test: below, its row is made silent, and a beat would make it
  // seen again (the default beat is 10 s, which two admin runs on a loaded machine can outlast).
  const second = await registerInstance(db, keys, (error) => failures.push(error), 3_600_000);
  try {
    t.is(await db('instances').where({ id: gone.id }).first(), undefined, 'an instance gone for a day is forgotten at the next start');
    t.deepEqual((await liveInstances(db)).map((instance) => instance.id).sort(), [first.id, second.id].sort());

    // keys rotate (add and activate at once) is for a single instance.
    await loadOrCreateSigningKeys(db);
    await loadOrCreateCookieKeys(db);
    const stored = await storedRings(db);
    const refused = await admin(database, 'keys', 'rotate');
    assertRefused(t, refused, /^error: 2 instances are running \(instance .*; instance .*\): rotate in stages instead/);
    t.true(refused.err.includes(first.id) && refused.err.includes(second.id), 'the refusal names both');
    t.deepEqual(await storedRings(db), stored, 'the refused rotation wrote nothing');

    // The heartbeat keeps an instance seen, and writes its row again if it went missing.
    const seen = Number((await db('instances').where({ id: first.id }).first('seen_at')).seen_at);
    await waitFor(async () => Number((await db('instances').where({ id: first.id }).first('seen_at'))?.seen_at ?? 0) > seen);
    await db('instances').where({ id: first.id }).delete();
    await waitFor(async () => (await db('instances').where({ id: first.id }).first()) !== undefined);

    // One that stopped without saying so counts only until LIVE_MS after it was last seen.
    await db('instances').where({ id: second.id }).update({ seen_at: Date.now() - LIVE_MS - 1_000 });
    t.deepEqual((await liveInstances(db)).map((instance) => instance.id), [first.id]);
    const rotated = await admin(database, 'keys', 'rotate');
    t.is(rotated.code, 0, rotated.err);

    await first.close();
    t.is(await db('instances').where({ id: first.id }).first(), undefined, 'an instance that stops removes itself');
    t.deepEqual(failures, []);
  } finally {
    await first.close();
    await second.close();
  }
});

testOnEachDatabase('a heartbeat slower than its interval does not write its missing row twice', async (t, database) => {
  const { db } = database;
  const failures: unknown[] = [];
  // A beat every millisecond: each one that finds the row missing takes longer than that to write it.
  const instance = await registerInstance(db, { published: ['k1'], signing: ['k1'], cookieVerify: ['c1'], cookieSign: 'c1' }, (error) => failures.push(error), 1);
  try {
    for (let round = 0; round < 30; round++) {
      await db('instances').where({ id: instance.id }).delete();
      await waitFor(async () => (await db('instances').where({ id: instance.id }).first()) !== undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, 50)); // nothing to wait for: a late beat would have written a second row by now
    t.deepEqual(failures, []);
    t.is(Number((await db('instances').where({ id: instance.id }).count({ n: '*' }).first())!.n), 1);
  } finally {
    await instance.close();
  }
});

async function waitFor(condition: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
