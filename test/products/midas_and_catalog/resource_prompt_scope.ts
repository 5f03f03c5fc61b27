/**
 * Resources and prompts are scope-checked like tools (DESIGN.md §6 step 3, docs/mcp.md: "resources/read
 * and prompts/get go through the same steps"), over the whole catalog: a grant without a resource's
 * or prompt's scope is refused with HTTP 403 insufficient_scope naming it, and does not see it in
 * resources/templates/list or prompts/list. catalog_contract.ts holds every tool to this; the
 * resources and prompts had no such test, and the pipeline without these checks passed the suite.
 */
import { randomUUID } from 'node:crypto';
import { PRODUCTS } from '../../../mcp/products/index.js';
import { auditOf, grant, mcpTest, openSession, rawCall } from '../../helpers/mcp.js';

const live = PRODUCTS.filter((p) => p.status === 'live');

function scopeRefusal(scope: string): RegExp {
  return new RegExp(`error="insufficient_scope".*scope="${scope.replace(/\./g, '\\.')}"`);
}

mcpTest('every resource template and every prompt refuses a grant without its scope, naming the scope', async (t, server) => {
  t.timeout(180_000);
  const scheme = server.config.resourceUriScheme;
  let checked = 0;
  for (const product of live) {
    for (const resource of product.resources) {
      const others = Object.keys(product.scopes).filter((scope) => scope !== resource.scope);
      const { token, connection } = await grant(server, { product: product.id, tenant: 'acme', scopes: others });
      const uri = `${scheme}://${product.id}/${resource.collection}/${randomUUID()}`;
      const response = await rawCall(server, token, product.id, 'resources/read', { uri });
      t.is(response.status, 403, `${uri}: ${response.text.slice(0, 300)}`);
      t.is(response.body?.error?.data?.code, 'insufficient_scope', uri);
      t.regex(response.headers.get('www-authenticate') ?? '', scopeRefusal(resource.scope), uri);
      t.deepEqual((await auditOf(server, 'acme', { connection_id: connection.id })).map((r) => [r.kind, r.outcome]), [['resource', 'insufficient_scope']], uri);
      checked += 1;
    }
    for (const prompt of product.prompts) {
      const others = Object.keys(product.scopes).filter((scope) => scope !== prompt.scope);
      const { token, connection } = await grant(server, { product: product.id, tenant: 'acme', scopes: others });
      const args = Object.fromEntries(Object.keys(prompt.args).map((name) => [name, name.endsWith('_id') ? randomUUID() : 'x']));
      const response = await rawCall(server, token, product.id, 'prompts/get', { name: prompt.name, arguments: args });
      t.is(response.status, 403, `${prompt.name}: ${response.text.slice(0, 300)}`);
      t.is(response.body?.error?.data?.code, 'insufficient_scope', prompt.name);
      t.regex(response.headers.get('www-authenticate') ?? '', scopeRefusal(prompt.scope), prompt.name);
      t.deepEqual((await auditOf(server, 'acme', { connection_id: connection.id })).map((r) => [r.kind, r.outcome]), [['prompt', 'insufficient_scope']], prompt.name);
      checked += 1;
    }
  }
  t.true(checked > 0);
  t.log(`${checked} resource templates and prompts refused without their scope`);
});

mcpTest('a connection lists exactly the tools, resource templates and prompts its scopes allow', async (t, server) => {
  t.timeout(180_000);
  for (const product of live) {
    for (const scope of Object.keys(product.scopes)) {
      const { token } = await grant(server, { product: product.id, tenant: 'acme', scopes: [scope] });
      const sessionId = await openSession(server, token, product.id);
      const list = async (method: string, key: string, name: (entry: any) => string) => {
        const response = await rawCall(server, token, product.id, method, {}, { sessionId });
        t.is(response.status, 200, `${product.id} ${method}: ${response.text.slice(0, 200)}`);
        return ((response.body?.result?.[key] ?? []) as unknown[]).map(name).sort();
      };
      t.deepEqual(await list('tools/list', 'tools', (e) => e.name), product.tools.filter((x) => x.scope === scope).map((x) => x.name).sort(), `${scope}: tools`);
      t.deepEqual(
        await list('resources/templates/list', 'resourceTemplates', (e) => e.name),
        product.resources.filter((x) => x.scope === scope).map((x) => `${product.id}.${x.collection}`).sort(),
        `${scope}: resource templates`,
      );
      t.deepEqual(await list('prompts/list', 'prompts', (e) => e.name), product.prompts.filter((x) => x.scope === scope).map((x) => x.name).sort(), `${scope}: prompts`);
    }
  }
});
