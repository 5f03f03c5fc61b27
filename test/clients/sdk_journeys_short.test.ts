/**
 * Short journeys of the MCP SDK's own client. Each file in sdk_journeys_short/ was a test file of
 * its own; they run here in one worker process: ava starts a process for each test file, and each
 * paid ~1.5-2.5 s of CPU to load the service's modules before its first test (docs/performance.md
 * item 37).
 */
import './sdk_journeys_short/sdk_journey_expiry.js';
import './sdk_journeys_short/sdk_parallel_refresh.js';
import './sdk_journeys_short/sdk_revoked_pending_call.js';
import './sdk_journeys_short/one_registration_two_products.js';
import './sdk_journeys_short/midas_roadmap.js';
import './sdk_journeys_short/resource_metadata.js';
