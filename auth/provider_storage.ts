/**
 * oidc-provider runs each of its requests inside one AsyncLocalStorage (its module
 * `lib/helpers/als.js`), so that its models can find the request. On Node 20 and 22 a storage
 * that has run once keeps V8's promise hooks and an async_hooks `init` hook on for the whole
 * process: from the first sign-in on, every promise and every async resource of every request,
 * the MCP host's tools/call included, pays for carrying a context that only the provider reads
 * (~5 % of the loaded MCP server's samples). So the storage is switched off whenever none of the
 * provider's requests is in flight; its next `run()` switches it on again. Code outside the
 * provider's requests never had its store, so nothing it reads changes. Node 24 carries
 * contexts without hooks, and there switching off outside a `run()` changes nothing.
 * (docs/performance.md item 12.)
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** Not part of oidc-provider's API: a module of its own, looked up at start; without it nothing is switched. */
const PROVIDER_STORAGE = 'oidc-provider/lib/helpers/als.js';

export interface Switchable {
  disable(): void;
}

/** The storage oidc-provider runs its requests in, or undefined if this version has none where it is looked for. */
export async function providerStorage(): Promise<Switchable | undefined> {
  try {
    const module = (await import(PROVIDER_STORAGE)) as { default?: unknown };
    return module.default instanceof AsyncLocalStorage ? module.default : undefined;
  } catch {
    return undefined;
  }
}

type Gate = <T>(work: () => Promise<T>) => Promise<T>;
/** One count per storage: every server of a process (tests run several) shares oidc-provider's one storage. */
const gates = new WeakMap<Switchable, Gate>();

/**
 * Runs each piece of work it is given and switches `storage` off when the last one in flight
 * (of every caller of this storage) has finished, whether it succeeded or failed.
 */
export function offWhenIdle(storage: Switchable | undefined): Gate {
  if (!storage) return (work) => work();
  let gate = gates.get(storage);
  if (!gate) {
    let inFlight = 0;
    gate = async (work) => {
      inFlight += 1;
      try {
        return await work();
      } finally {
        inFlight -= 1;
        if (inFlight === 0) storage.disable();
      }
    };
    gates.set(storage, gate);
  }
  return gate;
}
