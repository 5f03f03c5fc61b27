/**
 * Product tools, resources and prompts at their edges. Each file in product_edges/ was a test file
 * of its own; they run here in one worker process: ava starts a process for each test file, and
 * each paid ~1.5-2.5 s of CPU to load the service's modules before its first test
 * (docs/performance.md item 37).
 */
import './product_edges/aegis_findings_cursor.js';
import './product_edges/forge_document_size.js';
import './product_edges/herald_review.js';
import './product_edges/listing_order.js';
import './product_edges/herald_updates.js';
import './product_edges/pawvault_vet_visit.js';
import './product_edges/read_only_tools.js';
