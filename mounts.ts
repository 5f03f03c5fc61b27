/** The parts mounted into the composition root, in order. Later parts add themselves here. */
import type { Mount } from './app.js';

export function defaultMounts(): Mount[] {
  return [];
}
