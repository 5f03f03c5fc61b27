/**
 * Client registration and metadata documents at their edges. Each file in registration_edges/ was
 * a test file of its own; they run here in one worker process: ava starts a process for each test
 * file, and each paid ~1.5-2.5 s of CPU to load the service's modules before its first test
 * (docs/performance.md item 37).
 */
import './registration_edges/registration_claim_scope.js';
import './registration_edges/registration_streamed_size.js';
import './registration_edges/registered_client_refused_scope.js';
import './registration_edges/endpoint_auth_methods.js';
import './registration_edges/redirect_uri_characters.js';
import './registration_edges/metadata_document_auth_method.js';
import './registration_edges/metadata_document_refetch.js';
import './registration_edges/form_streamed_size.js';
