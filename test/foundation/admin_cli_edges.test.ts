/**
 * The admin CLI with unusual names and options (real processes). Each file in admin_cli_edges/ was
 * a test file of its own; they run here in one worker process: ava starts a process for each test
 * file, and each paid ~1.5-2.5 s of CPU to load the service's modules before its first test
 * (docs/performance.md item 37).
 */
import './admin_cli_edges/admin_cli_client_name.js';
import './admin_cli_edges/admin_cli_display_name.js';
import './admin_cli_edges/admin_cli_repeated_options.js';
import './admin_cli_edges/admin_cli_unshowable_names.js';
