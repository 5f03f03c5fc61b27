/**
 * The sign-in, organization and consent pages. Each file in interaction_pages/ was a test file of
 * its own; they run here in one worker process: ava starts a process for each test file, and each
 * paid ~1.5-2.5 s of CPU to load the service's modules before its first test (docs/performance.md
 * item 37).
 */
import './interaction_pages/account_switch_page.js';
import './interaction_pages/consent_nothing_to_connect.js';
import './interaction_pages/consent_other_account.js';
import './interaction_pages/consent_web_client.js';
import './interaction_pages/login_hint.js';
import './interaction_pages/password_reset.js';
import './interaction_pages/sign_in_cancel.js';
import './interaction_pages/interaction_csrf.js';
import './interaction_pages/interaction_database_down.js';
import './interaction_pages/session_write_failure_log.js';
import './interaction_pages/https_public_url_cookies.js';
import './interaction_pages/routed_path.js';
