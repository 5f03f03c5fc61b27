/**
 * resultJson (mcp/pipeline.ts): a reply's result serialised with the success result's structured
 * JSON reused must be exactly what JSON.stringify gives for the same result.
 */
import test from 'ava';
import fc from 'fast-check';
import { resultJson, successResult } from '../../../mcp/pipeline.js';

test('a success result serialises exactly as JSON.stringify serialises it, whatever the tool returned', (t) => {
  t.notThrows(() => fc.assert(fc.property(fc.jsonValue(), (value) => {
    const result = successResult(value);
    return resultJson(result) === JSON.stringify(result);
  }), { numRuns: 1_000 }));
});

test('a result changed after it was made, or any other value, is serialised as it is', (t) => {
  const flagged = successResult({ items: [1, 2] });
  (flagged as Record<string, unknown>).isError = true;
  const retexted = successResult({ items: [1, 2] });
  retexted.content[0].text = 'other text';
  const extraBlock = successResult({ a: 'b' });
  extraBlock.content.push({ type: 'text', text: 'more' });
  for (const value of [flagged, retexted, extraBlock, { tools: [] }, { content: [{ type: 'text', text: '{}' }], structuredContent: {} }, null, 'text']) {
    t.is(resultJson(value), JSON.stringify(value));
  }
  t.is(resultJson(undefined), undefined);
  t.true(resultJson(flagged)!.includes('"isError":true'));
  t.true(resultJson(retexted)!.includes('other text'));
});
