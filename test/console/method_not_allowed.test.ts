/**
 * A console API route asked with a method it does not serve answers 405 method_not_allowed with
 * Allow (docs/errors.md), not 404.
 */
import test from 'ava';
import { databasesUnderTest } from '../helpers/db.js';
import { startConsole } from './setup.js';

type Json = any; // response bodies are asserted field by field

for (const kind of databasesUnderTest()) {
  test(`a console API route asked with another method answers 405 method_not_allowed with Allow [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const admin = await f.consoleToken('acmeAdmin', 'acme');
      for (const [method, path, allow] of [
        ['PUT', `/connections/${f.forge.ann.connection.id}`, /DELETE/],
        ['POST', '/connections', /GET/],
        ['DELETE', '/audit', /GET/],
      ] as const) {
        const response = await f.api(path, admin, { method });
        const body: Json = await response.json();
        t.is(response.status, 405, `${method} ${path}: ${JSON.stringify(body)}`);
        t.is(body.error?.code, 'method_not_allowed', `${method} ${path}`);
        t.regex(response.headers.get('allow') ?? '', allow, `${method} ${path}`);
      }
      const unknown = await f.api('/nothing-here', admin);
      t.is(unknown.status, 404, 'an unknown route stays 404');
    } finally {
      await f.close();
    }
  });
}
