/**
 * forge.analyze_document runs on the event loop, so its patterns must take linear time: a pattern
 * that backtracks super-linearly on ordinary text (a long dotted or base64 token, a heading line
 * of spaces) would hold every request of every tenant for seconds, and TOOL_TIMEOUT_MS cannot stop
 * synchronous work. The inputs below took 1.4-12 s with the earlier patterns; the bounds leave
 * two orders of magnitude for a loaded machine.
 */
import { analyzeText } from '../../mcp/products/forge/analysis.js';
import test from 'ava';
import fc from 'fast-check';
import { connect, mcpTest } from '../helpers/mcp.js';

const CASES: Array<[string, string]> = [
  // A long run of "word.word.": the e-mail pattern restarts at every word boundary and scans to the end (quadratic).
  ['dotted run, 40,000 characters', 'a.'.repeat(20_000)],
  // Addresses back to back in one token: each "@" is looked at once.
  ['addresses without spaces, 100,000 characters', 'a.b@c.d'.repeat(14_000)],
  // One long token (a pasted base64 blob): /\S+@\S+/ restarts at every character (quadratic).
  ['one token, 60,000 characters', 'x'.repeat(60_000)],
  // A heading line with a long run of spaces: /^(#{1,6})\s+(.+?)\s*#*\s*$/ is cubic.
  ['heading with 2,000 spaces', `# a${' '.repeat(2_000)}b`],
];

for (const [name, text] of CASES) {
  test(`analyzeText is linear: ${name} takes well under a second`, (t) => {
    const started = performance.now();
    analyzeText(text);
    const ms = performance.now() - started;
    t.true(ms < 500, `analyzeText took ${Math.round(ms)} ms on ${text.length} characters`);
  });
}

mcpTest('forge.analyze_document on a 40,000-character document does not freeze the server', async (t, server) => {
  const { client, close } = await connect(server, { product: 'forge', tenant: 'acme', scopes: ['forge.documents.read', 'forge.documents.write'] });
  try {
    const uploaded = await client.callTool({ name: 'forge.upload_document', arguments: { title: 'Dotted', text: 'a.'.repeat(20_000) } });
    const id = (uploaded.structuredContent as any).id;
    // The server runs in this process: the longest gap between ticks of a 10 ms timer is how long
    // every other request (any tenant, any product, OAuth) could not be served.
    let last = performance.now();
    let worst = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      worst = Math.max(worst, now - last);
      last = now;
    }, 10);
    try {
      const result = await client.callTool({ name: 'forge.analyze_document', arguments: { document_id: id } });
      t.falsy(result.isError);
    } finally {
      clearInterval(ticker);
    }
    t.true(worst < 500, `the event loop was blocked for ${Math.round(worst)} ms by one analyze_document call`);
  } finally {
    await close();
  }
});

test('headings and addresses are found as the earlier patterns found them', (t) => {
  const heading = (line: string) => analyzeText(`${line}\n\ntext`).headings;
  t.deepEqual(heading('## Title ##'), [{ level: 2, text: 'Title' }]);
  t.deepEqual(heading('# a   b  ###  '), [{ level: 1, text: 'a   b' }]);
  t.deepEqual(heading('###### six'), [{ level: 6, text: 'six' }]);
  t.deepEqual(heading('# C#'), [{ level: 1, text: 'C' }], 'closing hashes go, as before');
  t.deepEqual(heading('#Title'), [], 'a space must follow the hashes');
  t.deepEqual(heading('####### seven'), []);

  // Addresses: the same as /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b/g, lower-cased and unique, on random text.
  const earlier = (text: string) => [...new Set((text.match(/\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b/g) ?? []).map((e) => e.toLowerCase()))];
  fc.assert(fc.property(fc.stringMatching(/^[aZ9._%+@\- ,\n-]{0,40}$/), (text) => {
    t.deepEqual(analyzeText(text).email_addresses, earlier(text), JSON.stringify(text));
  }), { numRuns: 2_000 });
});
