/**
 * Requests at the edges: NUL bytes, forwarded addresses, tenants' resources, every surface. Each
 * file in request_edges/ was a test file of its own; they run here in one worker process: ava
 * starts a process for each test file, and each paid ~1.5-2.5 s of CPU to load the service's
 * modules before its first test (docs/performance.md item 37).
 */
import './request_edges/nul.js';
import './request_edges/tenant_resources.js';
import './request_edges/surfaces.js';
import './request_edges/forwarded_for.js';
