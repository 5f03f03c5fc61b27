/**
 * Elicitation and the confirmation protocol. Each file in elicitation_and_confirmation/ was a test
 * file of its own; they run here in one worker process: ava starts a process for each test file,
 * and each paid ~1.5-2.5 s of CPU to load the service's modules before its first test
 * (docs/performance.md item 37).
 */
import './elicitation_and_confirmation/elicitation_form.js';
import './elicitation_and_confirmation/elicitation_unanswered.js';
import './elicitation_and_confirmation/confirmation_binding.js';
