/**
 * Logs, metrics, the event relay and surfaces. Each file in logs_and_metrics/ was a test file of
 * its own; they run here in one worker process: ava starts a process for each test file, and each
 * paid ~1.5-2.5 s of CPU to load the service's modules before its first test (docs/performance.md
 * item 37).
 */
import './logs_and_metrics/log.js';
import './logs_and_metrics/log_secrets.js';
import './logs_and_metrics/metrics.js';
import './logs_and_metrics/metrics_labels.js';
import './logs_and_metrics/event_relay.js';
import './logs_and_metrics/surfaces.js';
