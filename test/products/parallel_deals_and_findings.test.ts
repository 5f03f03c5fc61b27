/**
 * Aegis findings and cavalier deals written at the same time (PostgreSQL). Each file in
 * parallel_deals_and_findings/ was a test file of its own; they run here in one worker process:
 * ava starts a process for each test file, and each paid ~1.5-2.5 s of CPU to load the service's
 * modules before its first test (docs/performance.md item 37).
 */
import './parallel_deals_and_findings/aegis_resolve_parallel.js';
import './parallel_deals_and_findings/cavalier_parallel_deal.js';
import './parallel_deals_and_findings/cavalier_parallel_quote.js';
