/**
 * Grants, tokens and the flow as openid-client drives it. Each file in grants_and_tokens/ was a
 * test file of its own; they run here in one worker process: ava starts a process for each test
 * file, and each paid ~1.5-2.5 s of CPU to load the service's modules before its first test
 * (docs/performance.md item 37).
 */
import './grants_and_tokens/client_binding.js';
import './grants_and_tokens/debug_log.js';
import './grants_and_tokens/default_mounts.js';
import './grants_and_tokens/email_scope.js';
import './grants_and_tokens/flow.js';
import './grants_and_tokens/grant_lifetime.js';
