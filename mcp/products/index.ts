/** Every product server, in the order of SPEC.md part 1.5. Each product lives in its own folder. */
import type { ProductDefinition } from '../../shared/catalog.js';
import { forge } from './forge/index.js';

export const PRODUCTS: ProductDefinition<any>[] = [forge];
