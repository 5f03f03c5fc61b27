/**
 * Bearer tokens, audiences and tenants on the MCP servers. Each file in tokens_and_tenants/ was a
 * test file of its own; they run here in one worker process: ava starts a process for each test
 * file, and each paid ~1.5-2.5 s of CPU to load the service's modules before its first test
 * (docs/performance.md item 37).
 */
import './tokens_and_tenants/audience_cache.js';
import './tokens_and_tenants/bearer_kinds.js';
import './tokens_and_tenants/grant_tenant.js';
import './tokens_and_tenants/refused_token_reads.js';
import './tokens_and_tenants/oauth_e2e.js';
import './tokens_and_tenants/audit_record_fields.js';
import './tokens_and_tenants/rate_limit_audit.js';
