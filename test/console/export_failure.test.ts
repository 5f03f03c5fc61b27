/**
 * An audit export whose reading fails (the database gone, a table unreadable) is a server error
 * like any other (docs/errors.md): the operator finds it in the log with its request id and a
 * stack, and the request's own log line does not say 200.
 */
import test from 'ava';
import { databasesUnderTest } from '../helpers/db.js';
import { startConsole } from './setup.js';

for (const kind of databasesUnderTest()) {
  test(`an export that fails reading the log answers internal and is logged with its request id [${kind}]`, async (t) => {
    const fixture = await startConsole(kind);
    const { db } = fixture.server.portico.context;
    try {
      const token = await fixture.consoleToken('acmeAdmin', 'acme');
      // Make the log unreadable: only the export's own queries read audit_log.
      await db.schema.renameTable('audit_log', 'audit_log_away');
      for (const query of ['', '&outcome=ok']) {
        const requestId = `export-fails${query ? '-filtered' : ''}`;
        // A connection cut without any answer is status 0 here.
        const response = await fixture.api(`/audit/export?format=jsonl${query}`, token, { headers: { 'x-request-id': requestId } }).catch(() => undefined);
        const text = (await response?.text().catch(() => '')) ?? '';
        t.is(response?.status ?? 0, 500, `${query || 'whole chain'}: ${text.slice(0, 200)}`);
        t.is(response?.headers.get('x-request-id'), requestId, 'the answer names its request id');
        if (response) t.is(JSON.parse(text).error.request_id, requestId);
        await new Promise((resolve) => setTimeout(resolve, 100));
        const lines = fixture.server.logs.map((line) => JSON.parse(line) as Record<string, any>);
        const failure = lines.find((line) => line.level === 'error' && line.request_id === requestId);
        t.truthy(failure, `an error line with request id ${requestId}`);
        t.regex(String(failure?.err?.stack ?? ''), /\n\s+at /, 'with a stack');
        const request = lines.find((line) => line.msg === 'request' && line.request_id === requestId);
        t.is(request?.status, 500, 'the request line tells the status the client got');
      }
    } finally {
      await db.schema.renameTable('audit_log_away', 'audit_log').catch(() => undefined);
      await fixture.close();
    }
  });
}
