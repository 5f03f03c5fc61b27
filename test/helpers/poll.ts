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
