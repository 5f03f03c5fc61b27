/**
 * An audit commit whose answer is lost (PostgreSQL). Each file in audit_lost/ was a test file of
 * its own; they run here in one worker process: ava starts a process for each test file, and each
 * paid ~1.5-2.5 s of CPU to load the service's modules before its first test (docs/performance.md
 * item 37).
 */
import './audit_lost/audit_lost_answer.js';
import './audit_lost/audit_lost_commit.js';
import './audit_lost/audit_lost_in_flight.js';
