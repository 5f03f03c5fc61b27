/**
 * Migrations, schema, ids and tenant scoping. Each file in schema_and_data/ was a test file of its
 * own; they run here in one worker process: ava starts a process for each test file, and each paid
 * ~1.5-2.5 s of CPU to load the service's modules before its first test (docs/performance.md item
 * 37).
 */
import './schema_and_data/database_failure_node_codes.js';
import './schema_and_data/migrated_template.js';
import './schema_and_data/migrations.js';
import './schema_and_data/schema_ahead.js';
import './schema_and_data/sqlite_reads.js';
import './schema_and_data/tenant_scope.js';
import './schema_and_data/ids.js';
