/**
 * MCP sessions and the protocol at its edges. Each file in sessions_and_protocol/ was a test file
 * of its own; they run here in one worker process: ava starts a process for each test file, and
 * each paid ~1.5-2.5 s of CPU to load the service's modules before its first test
 * (docs/performance.md item 37).
 */
import './sessions_and_protocol/protocol_version.js';
import './sessions_and_protocol/failed_initialize.js';
import './sessions_and_protocol/duplicate_request_id.js';
import './sessions_and_protocol/session_delete.js';
import './sessions_and_protocol/new_session_cap.js';
import './sessions_and_protocol/result_json.js';
import './sessions_and_protocol/task_call.js';
import './sessions_and_protocol/refused_params.js';
import './sessions_and_protocol/auth_before_body.js';
