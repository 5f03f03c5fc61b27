/**
 * People's lifecycle writes racing one another (PostgreSQL). Each file in parallel_people/ was a
 * test file of its own; they run here in one worker process: ava starts a process for each test
 * file, and each paid ~1.5-2.5 s of CPU to load the service's modules before its first test
 * (docs/performance.md item 37).
 */
import './parallel_people/people_parallel_manager_change.js';
import './parallel_people/people_parallel_offboarding.js';
import './parallel_people/people_parallel_onboarding.js';
import './parallel_people/people_parallel_tasks.js';
