/**
 * Asks `probe` every `everyMs` until it answers something other than undefined, or `ms` have
 * passed; answers its last answer (undefined when it never came).
 */
export async function until<T>(ms: number, probe: () => Promise<T | undefined>, everyMs = 50): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined || Date.now() > end) return value;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** `promise`, or undefined if it has not settled within `ms`. */
export async function within<T>(ms: number, promise: Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
