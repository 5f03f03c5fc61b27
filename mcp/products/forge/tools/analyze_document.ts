import { z } from 'zod';
import { analyzeText, MAX_LISTED } from '../analysis.js';
import { forgeTool, documentOut } from '../wire.js';

export default forgeTool({
  name: 'forge.analyze_document',
  title: 'Analyse a document',
  description:
    'Analyses a stored document of the organization deterministically (no AI model, same text gives the same result): ' +
    'character, word, sentence and paragraph counts, reading time in minutes, headings, the ten most frequent key terms, links, e-mail addresses and dates found in the text. ' +
    `Headings, links, e-mail addresses and dates list the first ${MAX_LISTED} found each, with <list>_total (how many there are) and <list>_truncated (true when some were left out). ` +
    'Needs the document id; does not change the document.',
  scope: 'forge.documents.read',
  destructive: false,
  idempotent: true,
  input: {
    document_id: z.string().min(1).max(200).describe('Id of the document (as returned by forge.upload_document).'),
  },
  async handler(args, context) {
    const row = await context.repos.documents.require(args.document_id);
    return { document: documentOut(row, context), analysis: analyzeText(row.text) };
  },
});
