import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { currencyArg, dateArg, dateToMs, minorArg, nameArg } from '../../common.js';
import { OPEN_DEAL_STAGES, type CavalierRepository } from '../repository.js';

export default defineTool({
  name: 'cavalier.create_deal',
  title: 'Create a deal',
  description:
    'Creates a deal in your organization\'s pipeline for a customer, with an estimated value in integer minor units of an ISO 4217 ' +
    'currency. It starts at stage lead unless stage qualified or proposal is given (a deal cannot be created already won or lost). ' +
    'An expected_close_date before today is refused (invalid_arguments). Returns the deal. Does not contact the customer.',
  scope: 'cavalier.deals.write',
  destructive: false,
  input: {
    title: nameArg(200).describe('Short name of the opportunity.'),
    customer: nameArg(200).describe('Customer name.'),
    currency: currencyArg,
    value_minor: minorArg('Estimated deal value'),
    stage: z.enum(OPEN_DEAL_STAGES).default('lead').describe('Starting stage, default lead.'),
    expected_close_date: dateArg.optional().describe('When the deal is expected to close, YYYY-MM-DD; today or later.'),
    notes: z.string().trim().max(4000).optional().describe('Free-text notes.'),
  },
  async handler(args, { repos, user, resourceUri }: ToolContext<CavalierRepository>) {
    const deal = await repos.deals.create({
      title: args.title,
      customer: args.customer,
      currency: args.currency,
      value_minor: args.value_minor,
      stage: args.stage,
      expected_close_at: args.expected_close_date ? dateToMs(args.expected_close_date) : null,
      notes: args.notes ?? null,
      created_by: user.id,
    });
    return { ...deal, uri: resourceUri('deals', deal.id) };
  },
});
