/**
 * Authorization codes and resource indicators. Each file in codes_and_resources/ was a test
 * file of its own; they run here in one worker process: ava starts a process for each test file,
 * and each paid ~1.5-2.5 s of CPU to load the service's modules before its first test
 * (docs/performance.md item 37).
 */
import './codes_and_resources/code_resource.js';
import './codes_and_resources/code_resource_pkce.js';
import './codes_and_resources/resource_neutral_scopes.js';
import './codes_and_resources/resource_spelling.js';
import './codes_and_resources/revoke_access_token.js';
