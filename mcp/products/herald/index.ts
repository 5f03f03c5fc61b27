/** herald: broadcasts to the organization's subscribers, and its trust center. */
import { defineProduct } from '../../../shared/catalog.js';
import { heraldRepository, type HeraldRepository } from './repository.js';
import { seedHerald } from './seed.js';
import listBroadcasts from './tools/list_broadcasts.js';
import getBroadcast from './tools/get_broadcast.js';
import createBroadcast from './tools/create_broadcast.js';
import updateBroadcast from './tools/update_broadcast.js';
import scheduleBroadcast from './tools/schedule_broadcast.js';
import unscheduleBroadcast from './tools/unschedule_broadcast.js';
import sendBroadcast from './tools/send_broadcast.js';
import listSubscribers from './tools/list_subscribers.js';
import addSubscriber from './tools/add_subscriber.js';
import listDocuments from './tools/list_documents.js';
import getDocument from './tools/get_document.js';
import createDocument from './tools/create_document.js';
import updateDocument from './tools/update_document.js';
import publishDocument from './tools/publish_document.js';
import unpublishDocument from './tools/unpublish_document.js';
import broadcastsResource from './resources/broadcasts.js';
import documentsResource from './resources/documents.js';
import reviewBroadcast from './prompts/review_broadcast.js';

export const herald = defineProduct<HeraldRepository>({
  id: 'herald',
  title: 'Herald',
  kind: 'Broadcasts and trust-center',
  status: 'live',
  scopes: {
    'herald.broadcasts.read': 'Read your broadcasts and the list of their subscribers',
    'herald.broadcasts.write': 'Draft, schedule and send broadcasts, and add subscribers',
    'herald.trust.read': 'Read your trust-center documents, including drafts and NDA-only ones',
    'herald.trust.write': 'Draft, publish and unpublish trust-center documents',
  },
  tools: [
    listBroadcasts, getBroadcast, createBroadcast, updateBroadcast, scheduleBroadcast, unscheduleBroadcast, sendBroadcast,
    listSubscribers, addSubscriber,
    listDocuments, getDocument, createDocument, updateDocument, publishDocument, unpublishDocument,
  ],
  resources: [broadcastsResource, documentsResource],
  prompts: [reviewBroadcast],
  entities: { broadcast: 'herald_broadcasts', document: 'herald_documents' },
  seedDemo: seedHerald,
  repositories: heraldRepository,
});
