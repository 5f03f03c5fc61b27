/** cavalier: operations — quotes, deals and statements of work (SPEC.md part 1.5). */
import { z } from 'zod';
import { defineProduct, definePrompt, defineResource, type ToolContext } from '../../../shared/catalog.js';
import { granted } from '../common.js';
import { dealAsGranted } from './granted.js';
import { seedCavalierDemo } from './demo.js';
import { cavalierRepository, DEAL_RECORDS_SHOWN, type CavalierRepository } from './repository.js';
import closeDeal from './tools/close_deal.js';
import completeSow from './tools/complete_sow.js';
import createDeal from './tools/create_deal.js';
import createQuote from './tools/create_quote.js';
import createSow from './tools/create_sow.js';
import deleteQuote from './tools/delete_quote.js';
import getDeal from './tools/get_deal.js';
import getQuote from './tools/get_quote.js';
import getSow from './tools/get_sow.js';
import listDeals from './tools/list_deals.js';
import listQuotes from './tools/list_quotes.js';
import listSows from './tools/list_sows.js';
import recordQuoteDecision from './tools/record_quote_decision.js';
import updateDealStage from './tools/update_deal_stage.js';
import updateQuoteStatus from './tools/update_quote_status.js';
import updateSowStatus from './tools/update_sow_status.js';

const quoteResource = defineResource<CavalierRepository>({
  collection: 'quotes',
  title: 'Quote',
  description: 'A quote with its line items and server-computed subtotal, tax and total.',
  scope: 'cavalier.quotes.read',
  mimeType: 'application/json',
  read: (id, { repos }) => repos.quotes.get(id),
});

const dealResource = defineResource<CavalierRepository>({
  collection: 'deals',
  title: 'Deal',
  description: `A deal with its stage, value, and summaries of the newest ${DEAL_RECORDS_SHOWN} quotes (with cavalier.quotes.read) and statements of work (with cavalier.sows.read) attached to it, with their totals.`,
  scope: 'cavalier.deals.read',
  mimeType: 'application/json',
  read: async (id, context) => dealAsGranted(context, await context.repos.deals.get(id)),
});

const sowResource = defineResource<CavalierRepository>({
  collection: 'sows',
  title: 'Statement of work',
  description: 'A statement of work with its scope summary and milestones.',
  scope: 'cavalier.sows.read',
  mimeType: 'application/json',
  read: (id, { repos }) => repos.sows.get(id),
});

const draftSowFromDeal = definePrompt({
  name: 'cavalier.draft_sow_from_deal',
  title: 'Draft a statement of work from a deal',
  description:
    'Embeds a deal and the quote the draft is based on, the accepted or else the latest one (with its line items and totals, when the connection may read quotes), ' +
    'and asks for a draft statement of work: scope, exclusions and milestones whose amounts add up to that quote, ready to pass to cavalier.create_sow.',
  scope: 'cavalier.deals.read',
  args: {
    deal_id: z.string().max(100).describe('The deal to write the statement of work for.'),
  },
  async get({ deal_id }, context: ToolContext<CavalierRepository>) {
    const { repos, resourceUri } = context;
    const deal = await repos.deals.get(deal_id);
    // Quotes' line items and totals are cavalier.quotes.read's to show (cavalier.get_quote).
    const mayReadQuotes = granted(context, 'cavalier.quotes.read');
    // Only the basis is embedded in full: a deal may have any number of quotes, each with its lines.
    const basis = mayReadQuotes ? await repos.quotes.basisOf(deal.id) : undefined;
    const instructions = [
      `Draft a statement of work for the deal "${deal.title}" with ${deal.customer} (stage ${deal.stage}, value ${deal.value}).`,
      basis
        ? `Base it on quote ${basis.id} (${basis.status}, total ${basis.total}); the milestone amounts must add up to its subtotal of ${basis.subtotal_minor} minor units of ${basis.currency}.`
        // Whether the deal has quotes at all is cavalier.quotes.read's to tell, as get_deal leaves out quotes_total.
        : !mayReadQuotes
          ? `This connection may not read quotes (cavalier.quotes.read); base the milestones on the deal value of ${deal.value_minor} minor units of ${deal.currency} and say that they should be checked against the accepted quote, if there is one.`
          : `The deal has no quote yet; base the milestones on the deal value of ${deal.value_minor} minor units of ${deal.currency}.`,
      'Write: a title; a scope summary that says what is delivered and what is explicitly out of scope; 2-6 milestones, each with a title, ' +
        'a due date (YYYY-MM-DD) and an amount in minor units.',
      deal.stage === 'proposal' || deal.stage === 'won'
        ? `When the person approves the draft, create it with cavalier.create_sow and deal_id ${deal.id}.`
        : `The deal is at stage ${deal.stage}: cavalier.create_sow accepts only deals at proposal or won, so present the draft for review only.`,
    ].join('\n');
    return [
      // The deal's quote and SOW summaries are their own scopes' to show, as in the instructions above.
      // The deal as its resource shows it to this grant (dealAsGranted).
      { role: 'user', content: { type: 'resource', resource: { uri: resourceUri('deals', deal.id), mimeType: 'application/json', text: JSON.stringify(dealAsGranted(context, deal), null, 2) } } },
      ...(basis ? [{
        role: 'user' as const,
        content: { type: 'resource' as const, resource: { uri: resourceUri('quotes', basis.id), mimeType: 'application/json', text: JSON.stringify(basis, null, 2) } },
      }] : []),
      { role: 'user', content: { type: 'text', text: instructions } },
    ];
  },
});

export const cavalier = defineProduct<CavalierRepository>({
  id: 'cavalier',
  title: 'Cavalier',
  kind: 'Operations: quotes, deals, statements of work',
  status: 'live',
  scopes: {
    'cavalier.quotes.read': 'See your organization\'s quotes, their line items and totals',
    'cavalier.quotes.write': 'Create quotes, change their status, and delete quotes that were not accepted',
    'cavalier.deals.read': 'See your organization\'s deals and their stages',
    'cavalier.deals.write': 'Create deals and move them through the pipeline',
    'cavalier.sows.read': 'See your organization\'s statements of work and their milestones',
    'cavalier.sows.write': 'Create statements of work from deals and change their status',
  },
  tools: [
    listQuotes, getQuote, createQuote, updateQuoteStatus, recordQuoteDecision, deleteQuote,
    listDeals, getDeal, createDeal, updateDealStage, closeDeal,
    listSows, getSow, createSow, updateSowStatus, completeSow,
  ],
  resources: [quoteResource, dealResource, sowResource],
  prompts: [draftSowFromDeal],
  entities: { quote: 'cavalier_quotes', deal: 'cavalier_deals', sow: 'cavalier_sows' },
  seedDemo: seedCavalierDemo,
  repositories: (scope) => cavalierRepository(scope),
});
