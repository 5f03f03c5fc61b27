/**
 * Checklist B3 with the resource guard in front: an exchange with a wrong (or missing)
 * code_verifier, or another redirect_uri, is refused with invalid_grant and the code is dead
 * afterwards, whatever `resource` it names; the guard answers invalid_target only to an exchange
 * that would otherwise succeed, so it tells a holder of the code without the verifier nothing.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { authorizeCode, pkce, tokenRequest } from '../../helpers/oauth.js';
import { PASSWORD, startAuthServer } from '../support.js';

for (const kind of databasesUnderTest()) {
  test(`a wrong code_verifier sent with a wrong resource still kills the code [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const code = await authorizeCode(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes: ['forge.chat.read'] });
      const base = { grant_type: 'authorization_code', code: code.code, client_id: code.clientId, redirect_uri: code.redirectUri };

      const attacker = await tokenRequest(server.url, { ...base, code_verifier: pkce().verifier, resource: server.aegis });
      const attackerBody = (await attacker.json()) as { error: string };
      t.is(attacker.status, 400);
      t.is(attackerBody.error, 'invalid_grant', 'a wrong verifier is invalid_grant, whatever resource is named');

      const later = await tokenRequest(server.url, { ...base, code_verifier: code.verifier, resource: server.forge });
      t.is(later.status, 400, 'the code must be dead after a wrong verifier (checklist B3)');
    } finally {
      await server.close();
    }
  });
}
