/** Debian's Chromium through playwright-core, as every browser test drives it (README: the browser tests). */
import test from 'ava';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
}

/** One browser for the test file: launched before its tests, closed after them. */
export function sharedBrowser(): () => Browser {
  let browser: Browser | undefined;
  test.before(async () => {
    browser = await launchChromium();
  });
  test.after.always(async () => browser?.close());
  return () => browser!;
}
