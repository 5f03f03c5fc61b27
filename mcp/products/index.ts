/** Every product server, in the order of SPEC.md part 1.5. Each product lives in its own folder. */
import type { ProductDefinition } from '../../shared/catalog.js';
import { forge } from './forge/index.js';
import { cavalier } from './cavalier/index.js';
import { aegis } from './aegis/index.js';
import { harvest } from './harvest/index.js';
import { reclaim } from './reclaim/index.js';
import { herald } from './herald/index.js';
import { terrain } from './terrain/index.js';
import { people } from './people/index.js';
import { pawvault } from './pawvault/index.js';
import { midas } from './midas/index.js';

export const PRODUCTS: ProductDefinition<any>[] = [forge, cavalier, aegis, harvest, reclaim, herald, terrain, people, pawvault, midas];
