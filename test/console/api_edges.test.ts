/**
 * The console API and pages at their edges: methods, parameters, cookies, CSRF. Each file in
 * api_edges/ was a test file of its own; they run here in one worker process: ava starts a process
 * for each test file, and each paid ~1.5-2.5 s of CPU to load the service's modules before its
 * first test (docs/performance.md item 37).
 */
import './api_edges/api_use_after_revoke.js';
import './api_edges/bearer_scheme.js';
import './api_edges/method_not_allowed.js';
import './api_edges/query_params.js';
import './api_edges/unknown_page.js';
import './api_edges/csrf_binding.js';
import './api_edges/cookie_rotation.js';
import './api_edges/https_public_url.js';
import './api_edges/organization_switch.js';
