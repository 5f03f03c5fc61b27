/**
 * herald.review_broadcast checks a broadcast's claims against the trust-center documents it lists:
 * a document missing from that list reads as unpublished. The list is cut at 20, so it must say
 * when it is, and a connection that may not read NDA-only documents must still see the public ones
 * however many newer NDA-only documents there are. Each test has a server of its own: they publish
 * many documents in acme.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ExecutionContext } from 'ava';
import { herald } from '../../../mcp/products/herald/index.js';
import { connect, mcpTest, type McpTestServer } from '../../helpers/mcp.js';

const ALL = Object.keys(herald.scopes);

async function ok(t: ExecutionContext, client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) t.fail(`${name}: ${JSON.stringify(result.structuredContent)}`);
  return result.structuredContent;
}

/** Publishes `n` new documents in acme. */
async function publish(t: ExecutionContext, client: Client, n: number, document: (i: number) => Record<string, unknown>): Promise<void> {
  for (let i = 0; i < n; i += 1) {
    const { id } = await ok(t, client, 'herald.create_document', document(i));
    await ok(t, client, 'herald.publish_document', { document_id: id });
  }
}

/** The list of published documents in the review of one of acme's draft broadcasts, as `scopes` see it. */
async function reviewedDocuments(t: ExecutionContext, server: McpTestServer, writer: Client, scopes: string[]): Promise<string> {
  const { broadcasts } = await ok(t, writer, 'herald.list_broadcasts', { status: 'draft' });
  const reader = await connect(server, { product: 'herald', tenant: 'acme', scopes });
  try {
    const prompt = await reader.client.getPrompt({ name: 'herald.review_broadcast', arguments: { broadcast_id: broadcasts[0].id } });
    const text = (prompt.messages[0].content as { text: string }).text;
    return text.split('Trust-center documents currently published:\n')[1].split('\n\n')[0];
  } finally {
    await reader.close();
  }
}

mcpTest('review_broadcast says when its list of published documents is cut', async (t, server) => {
  const writer = await connect(server, { product: 'herald', tenant: 'acme', scopes: ALL });
  try {
    const before = await reviewedDocuments(t, server, writer.client, ALL);
    t.true(before.includes('Information Security Policy (policy, public, version 3)'));
    t.false(before.includes('more are published'), 'the demo list is whole');

    await publish(t, writer.client, 20, (i) => ({ title: `FAQ ${i}`, category: 'faq', body: `Answer ${i}.` }));
    const after = await reviewedDocuments(t, server, writer.client, ALL);
    t.is(after.split('\n').filter((line) => / \(faq, public, version 1\)$/.test(line)).length, 20);
    t.false(after.includes('Information Security Policy'), 'the oldest published document is past the 20 listed');
    t.regex(after, /\(only the 20 most recently created are listed; more are published\)$/);
  } finally {
    await writer.close();
  }
});

mcpTest('review_broadcast without herald.trust.read lists the public documents behind newer NDA-only ones', async (t, server) => {
  const writer = await connect(server, { product: 'herald', tenant: 'acme', scopes: ALL });
  try {
    await publish(t, writer.client, 20, (i) => ({ title: `Audit report ${i}`, category: 'report', visibility: 'nda', body: `Findings ${i}.` }));
    const publicOnly = await reviewedDocuments(t, server, writer.client, ['herald.broadcasts.read']);
    t.true(publicOnly.includes('- Information Security Policy (policy, public, version 3)'), publicOnly);
    t.true(publicOnly.includes('- Subprocessors (subprocessors, public, version 2)'), publicOnly);
    t.false(publicOnly.includes('Audit report'), 'NDA-only documents are not shown');
    t.false(publicOnly.includes('none published'));
    t.regex(publicOnly, /\(NDA-only documents are not shown: this connection may not read them, herald\.trust\.read\)$/);

    const everything = await reviewedDocuments(t, server, writer.client, ['herald.broadcasts.read', 'herald.trust.read']);
    t.true(everything.includes('- Audit report 19 (report, nda, version 1)'));
    t.false(everything.includes('NDA-only documents are not shown'));
  } finally {
    await writer.close();
  }
});
