/**
 * How client names are shown on the sign-in and consent pages. Each file in client_names/ was a
 * test file of its own; they run here in one worker process: ava starts a process for each test
 * file, and each paid ~1.5-2.5 s of CPU to load the service's modules before its first test
 * (docs/performance.md item 37).
 */
import './client_names/client_name.js';
import './client_names/client_name_invisible.js';
import './client_names/client_name_lookalike.js';
import './client_names/client_name_metadata_document.js';
