/**
 * Calls made with a revoked grant. Each file in revoked_calls/ was a test file of its own; they
 * run here in one worker process: ava starts a process for each test file, and each paid ~1.5-2.5
 * s of CPU to load the service's modules before its first test (docs/performance.md item 37).
 */
import './revoked_calls/revoked_call_use.js';
import './revoked_calls/revoked_sdk_call.js';
