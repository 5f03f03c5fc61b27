/**
 * Harvest, herald and terrain writes racing one another (PostgreSQL). Each file in
 * parallel_writes/ was a test file of its own; they run here in one worker process: ava starts a
 * process for each test file, and each paid ~1.5-2.5 s of CPU to load the service's modules before
 * its first test (docs/performance.md item 37).
 */
import './parallel_writes/harvest_parallel_updates.js';
import './parallel_writes/herald_parallel_transitions.js';
import './parallel_writes/terrain_parallel_names.js';
