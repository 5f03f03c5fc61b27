/**
 * Databases and settings the CLI and the server refuse (real processes). Each file in
 * database_refusals/ was a test file of its own; they run here in one worker process: ava starts a
 * process for each test file, and each paid ~1.5-2.5 s of CPU to load the service's modules before
 * its first test (docs/performance.md item 37).
 */
import './database_refusals/admin_cli_database_refusals.js';
import './database_refusals/cli_in_memory_database.js';
import './database_refusals/config_demo_password.js';
