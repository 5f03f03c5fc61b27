/**
 * Independent tools against a live Portico (SQLite and PostgreSQL): the MCP conformance suite's
 * server scenarios that apply to a product server, and the MCP Inspector CLI (v2, on Node 22)
 * listing and calling tools with a bearer token. A regression in either fails here.
 *
 * Conformance scenarios not run, and why: the fixture scenarios (tools-call-*, resources-read-*,
 * resources-templates-read, prompts-get-*, json-schema-2020-12, elicitation-*) call tools,
 * resources and prompts that only the suite's reference server has (test_simple_text,
 * test://static-text …); logging-set-level, completion-complete and resources-(un)subscribe call
 * capabilities a Portico server does not declare (clients must not call them; Portico answers
 * -32601 Method not found).
 */
import test from 'ava';
import { PRODUCTS } from '../../mcp/products/index.js';
import { databasesUnderTest } from '../helpers/db.js';
import { auditOf, grant, startMcpServer } from '../helpers/mcp.js';
import { bearerProxy, conformanceScenario, inspector, missingTools } from './interop_tools.js';

export const CONFORMANCE_SCENARIOS = [
  'server-initialize', 'ping', 'tools-list', 'resources-list', 'prompts-list', 'server-sse-multiple-streams', 'server-sse-polling', 'dns-rebinding-protection',
];
/** Every check those scenarios make that can succeed (server-sse-polling only reports INFO on a server without resumability). */
const EXPECTED_PASSES = [
  'server-initialize', 'ping', 'tools-list', 'resources-list', 'prompts-list',
  'server-accepts-multiple-post-streams', 'server-sse-streams-functional',
  'localhost-host-rebinding-rejected', 'localhost-host-valid-accepted',
];
const FORGE = Object.keys(PRODUCTS.find((p) => p.id === 'forge')!.scopes);
const LIVE = PRODUCTS.filter((p) => p.status === 'live');

for (const kind of databasesUnderTest()) {
  test(`the MCP conformance server scenarios pass against a live product server [${kind}]`, async (t) => {
    const missing = missingTools();
    if (missing) return t.fail(missing);
    t.timeout(180_000);
    let upstream = { target: '', token: '' };
    const proxy = await bearerProxy(() => upstream);
    // The suite's DNS-rebinding scenario sends the URL's own origin (the proxy's) as the legitimate one.
    const server = await startMcpServer(kind, { env: { MCP_CORS_ORIGINS: proxy.url } });
    try {
      const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: FORGE });
      upstream = { target: server.url, token };
      const passed: string[] = [];
      const failed: string[] = [];
      for (const scenario of CONFORMANCE_SCENARIOS) {
        const result = await conformanceScenario(`${proxy.url}/mcp/forge`, scenario);
        t.true(result.checks.length > 0, `${scenario} reported no checks: ${result.run.stderr.slice(0, 500)}`);
        for (const check of result.checks) {
          if (check.status === 'SUCCESS') passed.push(check.id);
          else if (check.status !== 'INFO') failed.push(`${scenario}/${check.id}: ${check.status} ${check.errorMessage ?? ''}`);
        }
      }
      t.deepEqual(failed, []);
      t.deepEqual(passed, EXPECTED_PASSES);
      t.log(`conformance: ${passed.length} checks passed, ${failed.length} failed, in ${CONFORMANCE_SCENARIOS.length} scenarios`);
    } finally {
      await server.close();
      await proxy.close();
    }
  });

  test(`the MCP Inspector CLI lists and calls tools with a bearer token [${kind}]`, async (t) => {
    const missing = missingTools();
    if (missing) return t.fail(missing);
    t.timeout(180_000);
    const server = await startMcpServer(kind);
    try {
      const url = `${server.mcpUrl}/forge`;
      const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: FORGE });
      const auth = ['--header', `Authorization: Bearer ${token}`];

      const listed = await inspector([url, '--transport', 'http', '--method', 'tools/list', ...auth]);
      t.is(listed.code, 0, listed.stderr);
      const tools = JSON.parse(listed.stdout).tools as Array<{ name: string; annotations?: { readOnlyHint?: boolean } }>;
      t.deepEqual(tools.map((tool) => tool.name), PRODUCTS.find((p) => p.id === 'forge')!.tools.map((tool) => tool.name));
      t.true(tools.find((tool) => tool.name === 'forge.list_conversations')!.annotations!.readOnlyHint);

      const called = await inspector([url, '--transport', 'http', '--method', 'tools/call', '--tool-name', 'forge.create_conversation', '--tool-arg', 'title=From the Inspector', ...auth]);
      t.is(called.code, 0, called.stderr);
      const created = JSON.parse(called.stdout).structuredContent as { id: string; title: string };
      t.is(created.title, 'From the Inspector');
      const row = await server.db('forge_conversations').where({ id: created.id }).first();
      t.is(row.tenant_id, server.tenants.acme.id);
      const audit = await auditOf(server, 'acme', { connection_id: connection.id, name: 'forge.create_conversation' });
      t.deepEqual(audit.map((r) => r.outcome), ['ok']);

      const prompts = await inspector([url, '--transport', 'http', '--method', 'prompts/list', ...auth]);
      t.deepEqual(JSON.parse(prompts.stdout).prompts.map((p: { name: string }) => p.name), ['forge.summarize_conversation']);

      // Without a token the Inspector finds the OAuth metadata and wants a person to sign in.
      const anonymous = await inspector([url, '--transport', 'http', '--method', 'tools/list']);
      t.is(anonymous.code, 3);
      t.regex(anonymous.stderr, /auth_required/);

      // Its schema portability check (--strict) over every live product's tools: no error-severity problem.
      for (const product of LIVE) {
        const { token: productToken } = await grant(server, { product: product.id, tenant: 'acme', scopes: Object.keys(product.scopes) });
        const strict = await inspector([`${server.mcpUrl}/${product.id}`, '--transport', 'http', '--method', 'tools/list', '--strict', '--header', `Authorization: Bearer ${productToken}`]);
        t.is(strict.code, 0, `${product.id}: ${strict.stderr.slice(0, 1500)}`);
        t.is(JSON.parse(strict.stdout).tools.length, product.tools.length, product.id);
      }
    } finally {
      await server.close();
    }
  });
}
