import { z } from 'zod';
import { AppError } from '../../../../shared/errors.js';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { currencyArg, dateArg, dateToMs, nameArg } from '../../common.js';
import type { CavalierRepository } from '../repository.js';

export default defineTool({
  name: 'cavalier.create_quote',
  title: 'Create a quote',
  description:
    'Creates a draft quote for a customer in an ISO 4217 currency from 1-100 line items (description, quantity, unit_price_minor in the ' +
    'currency\'s minor unit, e.g. cents). The server computes each line amount (quantity × unit price), the subtotal, the tax from ' +
    'tax_rate_percent (rounded half up to the minor unit) and the total; totals sent by the caller are not accepted. Optionally attached ' +
    'to a deal (deal_id; the currency must match the deal\'s, and customer defaults to the deal\'s). Returns the quote with its computed ' +
    'totals, in status draft. Does not send anything to the customer: use cavalier.update_quote_status to mark it sent.',
  scope: 'cavalier.quotes.write',
  destructive: false,
  input: {
    customer: nameArg(200).optional().describe('Customer name. Required unless deal_id is given.'),
    deal_id: z.string().max(100).optional().describe('A deal of your organization this quote belongs to.'),
    currency: currencyArg,
    line_items: z
      .array(z.strictObject({
        description: nameArg(500).describe('What is being sold.'),
        quantity: z.number().int().min(1).max(1_000_000).describe('Whole units, 1-1,000,000.'),
        unit_price_minor: z.number().int().min(0).max(100_000_000_000).describe('Price of one unit in the currency\'s minor unit (e.g. 1999 = 19.99 EUR).'),
      }))
      .min(1)
      .max(100)
      .describe('The items of the quote, in order.'),
    tax_rate_percent: z.number().min(0).max(100).default(0).describe('Tax rate in percent with at most two decimals, e.g. 19 or 7.25. Default 0.'),
    valid_until: dateArg.optional().describe('Last day the offer is valid, YYYY-MM-DD; today or later.'),
    notes: z.string().trim().max(4000).optional().describe('Free-text notes shown on the quote.'),
  },
  async handler(args, { repos, user, resourceUri }: ToolContext<CavalierRepository>) {
    const taxRateBp = Math.round(args.tax_rate_percent * 100);
    if (Math.abs(taxRateBp - args.tax_rate_percent * 100) > 1e-6) {
      throw new AppError('invalid_arguments', 'tax_rate_percent: at most two decimals', { details: { field: 'tax_rate_percent' } });
    }
    const quote = await repos.quotes.create({
      customer: args.customer,
      deal_id: args.deal_id,
      currency: args.currency,
      tax_rate_bp: taxRateBp,
      line_items: args.line_items,
      valid_until: args.valid_until ? dateToMs(args.valid_until) : null,
      notes: args.notes ?? null,
      created_by: user.id,
    });
    return { ...quote, uri: resourceUri('quotes', quote.id) };
  },
});
