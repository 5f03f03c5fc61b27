/**
 * Every confirmation question is asked with one form schema. The SDK validates an accepted answer
 * against the question's requestedSchema with the JSON-schema validator every session shares
 * (mcp/host.ts), and Ajv keeps each schema object it has compiled, by identity, for the life of
 * the process: a new form per question was compiled anew (~4 ms on the event loop) and kept
 * (~5 KB) on every accepted confirmation, without end.
 */
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { connect, mcpTest } from '../../helpers/mcp.js';

mcpTest('accepted confirmations of different records are validated with one form schema, compiled once', async (t, server) => {
  // Watches the SDK's validator (it still compiles and validates as before): which schema objects it is asked to compile.
  const compiled = new Set<object>();
  const getValidator = AjvJsonSchemaValidator.prototype.getValidator;
  AjvJsonSchemaValidator.prototype.getValidator = function (this: AjvJsonSchemaValidator, schema: Parameters<typeof getValidator>[0]) {
    compiled.add(schema);
    return getValidator.call(this, schema);
  } as typeof getValidator;
  t.teardown(() => {
    AjvJsonSchemaValidator.prototype.getValidator = getValidator;
  });
  const asked: string[] = [];
  const { client, close } = await connect(server, {
    product: 'forge', tenant: 'acme', scopes: ['forge.chat.read', 'forge.chat.write'],
    elicit: (message) => {
      asked.push(message);
      return { action: 'accept', content: { confirm: true } };
    },
  });
  try {
    for (const title of ['first', 'second', 'third']) {
      const created = await client.callTool({ name: 'forge.create_conversation', arguments: { title } });
      const id = (created.structuredContent as { id: string }).id;
      const deleted = await client.callTool({ name: 'forge.delete_conversation', arguments: { conversation_id: id } });
      t.falsy(deleted.isError, JSON.stringify(deleted));
      t.is(await server.db('forge_conversations').where({ id }).first(), undefined);
      t.regex(asked.at(-1)!, new RegExp(`Permanently delete the conversation ${id}`), 'the question still names the record');
    }
    t.is(compiled.size, 1, 'one form schema for every question');
  } finally {
    await close();
  }
});
