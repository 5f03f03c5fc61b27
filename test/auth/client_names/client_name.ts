/**
 * A self-chosen client_name is shown on the consent page and in the console, so it must read as
 * what it is: C0 and C1 controls, zero-width characters and bidirectional overrides are refused at
 * registration (checklist G6).
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { startAuthServer } from '../support.js';

for (const kind of databasesUnderTest()) {
  test(`a client_name with C1 controls or bidi overrides is refused like one with C0 controls [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      for (const name of ['Evil\u0085Name', 'Evil\u009bName', 'Claude \u202Eedoc\u202C', 'Cl\u200Baude']) {
        const response = await fetch(`${server.url}/oauth/register`, {
          method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: name, redirect_uris: ['http://127.0.0.1/cb'] }),
        });
        const body = (await response.json()) as { error?: string; client_id?: string };
        t.is(response.status, 400, `${JSON.stringify(name)}: ${response.status} ${JSON.stringify(body).slice(0, 120)}`);
        t.is(body.error, 'invalid_client_metadata', JSON.stringify(name));
      }
      t.is(Number((await server.portico.context.db('oidc_payloads').where({ model: 'Client' }).count({ n: '*' }).first())?.n), 0, 'nothing was registered');
    } finally {
      await server.close();
    }
  });
}
