/**
 * The audit log's records and hash chain. Each file in audit_records/ was a test file of its own;
 * they run here in one worker process: ava starts a process for each test file, and each paid
 * ~1.5-2.5 s of CPU to load the service's modules before its first test (docs/performance.md item
 * 37).
 */
import './audit_records/audit_chain_head.js';
import './audit_records/audit_chain_link.js';
import './audit_records/audit_record_size.js';
import './audit_records/audit_redaction.js';
