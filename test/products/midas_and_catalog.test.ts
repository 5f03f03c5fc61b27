/**
 * Midas's reads and the catalog's contract. Each file in midas_and_catalog/ was a test file of its
 * own; they run here in one worker process: ava starts a process for each test file, and each paid
 * ~1.5-2.5 s of CPU to load the service's modules before its first test (docs/performance.md item
 * 37).
 */
import './midas_and_catalog/catalog_contract.js';
import './midas_and_catalog/docs_sentences.js';
import './midas_and_catalog/midas_day_ranges.js';
import './midas_and_catalog/midas_roadmap_reads.js';
import './midas_and_catalog/midas_usage_report.js';
import './midas_and_catalog/resource_prompt_scope.js';
