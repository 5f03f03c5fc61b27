/**
 * forge.upload_document takes up to 500,000 characters within the request size limit (1 MiB by
 * default), as its description says: text outside Latin scripts takes up to three bytes a character
 * in UTF-8, so the limit, not the character count, bounds such a document. Within it the document
 * is stored; over it the request is refused as a whole, naming the limit, and nothing is stored.
 */
import { grant, mcpTest, rawCall } from '../../helpers/mcp.js';
import { forge } from '../../../mcp/products/forge/index.js';

mcpTest('forge.upload_document takes 330,000 Japanese characters within the default request limit and refuses 400,000, naming the limit', async (t, server) => {
  const tool = forge.tools.find((candidate) => candidate.name === 'forge.upload_document')!;
  t.regex(tool.description, /500,000 characters.*request size limit, 1 MiB.*about 340,000 characters of Chinese, Japanese or Korean/s);
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.documents.write'] });
  const upload = (title: string, characters: number) => rawCall(server, token, 'forge', 'tools/call', {
    name: 'forge.upload_document', arguments: { title, text: '日本語の文書です。'.repeat(Math.ceil(characters / 9)).slice(0, characters) },
  });

  const fits = await upload('Within the limit', 330_000);
  t.is(fits.status, 200);
  t.falsy(fits.body?.result?.isError, JSON.stringify(fits.body).slice(0, 300));
  t.is(fits.body?.result?.structuredContent?.size_bytes, 990_000);

  const over = await upload('Over the limit', 400_000);
  t.is(over.status, 413);
  t.is(over.body?.error?.data?.code, 'payload_too_large');
  t.regex(over.body?.error?.message ?? '', /exceeds 1048576 bytes/);
  t.deepEqual((await server.db('forge_documents').where({ tenant_id: server.tenants.acme.id, title: 'Over the limit' })).length, 0);
});
