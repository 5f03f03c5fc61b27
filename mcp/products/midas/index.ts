/**
 * midas: the organization's public API (endpoints and their usage). A roadmap entry: it is listed
 * in the inventory with no tools until an operator ships the surface (`npm run admin -- surface ship midas`).
 */
import { defineProduct } from '../../../shared/catalog.js';
import { midasRepository, type MidasRepository } from './repository.js';
import { seedMidas } from './seed.js';
import listEndpoints from './tools/list_endpoints.js';
import getEndpoint from './tools/get_endpoint.js';
import getUsage from './tools/get_usage.js';
import updateEndpoint from './tools/update_endpoint.js';
import endpointsResource from './resources/endpoints.js';
import usageReport from './prompts/usage_report.js';

export const midas = defineProduct<MidasRepository>({
  id: 'midas',
  title: 'Midas',
  kind: 'Roadmap entry: its tools appear only when the public-API surface ships',
  status: 'roadmap',
  scopes: {
    'midas.api.read': "See your public-API endpoints and how much they are used",
    'midas.api.write': "Change your public-API endpoints' summaries, rate limits and deprecation status",
  },
  tools: [listEndpoints, getEndpoint, getUsage, updateEndpoint],
  resources: [endpointsResource],
  prompts: [usageReport],
  entities: { endpoint: 'midas_endpoints' },
  seedDemo: seedMidas,
  repositories: midasRepository,
});
