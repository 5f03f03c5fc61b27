/**
 * Revocation events and surface announcements. Each file in revocation_and_surfaces/ was a test
 * file of its own; they run here in one worker process: ava starts a process for each test file,
 * and each paid ~1.5-2.5 s of CPU to load the service's modules before its first test
 * (docs/performance.md item 37).
 */
import './revocation_and_surfaces/revocation_event.js';
import './revocation_and_surfaces/unannounced_revocation.js';
import './revocation_and_surfaces/surface_announce_once.js';
