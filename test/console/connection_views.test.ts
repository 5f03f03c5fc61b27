/**
 * The console's connections and exports. Each file in connection_views/ was a test file of its
 * own; they run here in one worker process: ava starts a process for each test file, and each paid
 * ~1.5-2.5 s of CPU to load the service's modules before its first test (docs/performance.md item
 * 37).
 */
import './connection_views/connection_fields.js';
import './connection_views/connections_paging.js';
import './connection_views/revoked_by.js';
import './connection_views/export_failure.js';
import './connection_views/page_texts.js';
import './connection_views/cross_tenant.js';
