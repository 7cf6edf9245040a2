/**
 * Debian's chromium, headless, driven by playwright-core (a dev dependency of @sluice/cli, resolved from there):
 * what the browser tests share. Locally a test skips (with a message) without chromium; in CI it fails: .ci/run
 * installs it.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

export const CHROMIUM = '/usr/bin/chromium';

/** True when the browser tests can run; warns once, naming the test, when they are skipped. */
export function chromiumAvailable(test: string): boolean {
  const available = existsSync(CHROMIUM);
  if (!available && !process.env.CI)
    console.warn(`${test}: skipped, ${CHROMIUM} not found (apt-get install chromium)`);
  return available;
}

/** Launches headless chromium with playwright-core; `B` is the part of its Browser the test reads. */
export function launchChromium<B>(): Promise<B> {
  const playwright = createRequire(join(import.meta.dirname, '..', '..', 'packages', 'cli', 'package.json'))(
    'playwright-core',
  ) as { chromium: { launch(options: { executablePath: string; args: string[] }): Promise<B> } };
  return playwright.chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}
