/**
 * The console's audit log: filters, pages and who may see what. Each file in audit_queries/ was a
 * test file of its own; they run here in one worker process: ava starts a process for each test
 * file, and each paid ~1.5-2.5 s of CPU to load the service's modules before its first test
 * (docs/performance.md item 37).
 */
import './audit_queries/audit_filters.js';
import './audit_queries/audit_names_shown.js';
import './audit_queries/audit_page_people.js';
import './audit_queries/audit_newer_pages.js';
import './audit_queries/audit_params.js';
import './audit_queries/audit_access_recorded.js';
import './audit_queries/member_audit.js';
