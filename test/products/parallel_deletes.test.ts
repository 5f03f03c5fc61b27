/**
 * Deletes and updates racing one another in forge, pawvault and reclaim (PostgreSQL). Each file in
 * parallel_deletes/ was a test file of its own; they run here in one worker process: ava starts a
 * process for each test file, and each paid ~1.5-2.5 s of CPU to load the service's modules before
 * its first test (docs/performance.md item 37).
 */
import './parallel_deletes/forge_parallel_delete.js';
import './parallel_deletes/pawvault_parallel_delete.js';
import './parallel_deletes/reclaim_parallel_updates.js';
