/**
 * oidc-provider's per-request AsyncLocalStorage is switched off between its requests
 * (auth/provider_storage.ts): on Node 20 and 22 a storage left on keeps promise hooks on for every
 * request of the process, the MCP host's included.
 */
import test from 'ava';
import { offWhenIdle, providerStorage, type Switchable } from '../../auth/provider_storage.js';
import { databasesUnderTest } from '../helpers/db.js';
import { authorizeWithPassword, refresh } from '../helpers/oauth.js';
import { PASSWORD, startAuthServer } from './support.js';

function counting(): Switchable & { calls: number } {
  return { calls: 0, disable() { this.calls += 1; } };
}

test('the storage is switched off when the last work in flight has finished, whether it failed or not', async (t) => {
  const storage = counting();
  const gate = offWhenIdle(storage);
  t.is(offWhenIdle(storage), gate, 'every caller of one storage shares one count');
  let release!: () => void;
  const held = gate(() => new Promise<string>((resolve) => (release = () => resolve('held'))));
  await t.throwsAsync(offWhenIdle(storage)(async () => {
    throw new Error('failed');
  }), { message: 'failed' });
  t.is(await gate(async () => 'quick'), 'quick');
  t.is(storage.calls, 0, 'not while the held work is in flight');
  release();
  t.is(await held, 'held');
  t.is(storage.calls, 1);
  await t.throwsAsync(gate(async () => {
    throw new Error('alone');
  }));
  t.is(storage.calls, 2, 'a failure that was the last in flight switches it off too');
  t.is(await offWhenIdle(undefined)(async () => 7), 7, 'without a storage the work just runs');
});

for (const kind of databasesUnderTest()) {
  // Serial: the storage is one per process, so the other database's flows, running at the same
  // time in this worker, would switch it on while this test looks for it off.
  test.serial(`after the provider's requests its storage is off, and the next one still works [${kind}]`, async (t) => {
    const storage = (await providerStorage()) as (Switchable & { enabled?: boolean }) | undefined;
    t.truthy(storage, 'oidc-provider keeps its storage where provider_storage.ts looks for it');
    const server = await startAuthServer(kind);
    t.teardown(() => server.close());
    const tokens = await authorizeWithPassword(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes: ['forge.chat.read'] });
    const hooked = storage!.enabled !== undefined; // Node 20 and 22; Node 24 carries contexts without hooks
    if (hooked) t.false(storage!.enabled, 'off after sign-in, consent and the code exchange');
    const [a, b] = await Promise.all([1, 2].map(() => authorizeWithPassword(server.url, { email: 'bob@globex.example', password: PASSWORD, tenant: 'globex', resource: server.forge, scopes: ['forge.chat.read'] })));
    t.truthy(a.accessToken && b.accessToken);
    const refreshed = await refresh(server.url, { refreshToken: tokens.refreshToken!, clientId: tokens.clientId });
    t.truthy(refreshed.accessToken);
    if (hooked) t.false(storage!.enabled, 'off again after overlapping flows and a refresh');
  });
}
