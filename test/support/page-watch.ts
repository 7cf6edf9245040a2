/**
 * What the browser tests hold of every page they open: no console error, no uncaught error, and nothing fetched
 * but what the page may fetch. watchPage starts listening before the page loads.
 */

/** The part of a playwright-core Page that watchPage listens on. */
export interface WatchedPage {
  on(event: 'console', listener: (message: { type(): string; text(): string }) => void): void;
  on(event: 'pageerror', listener: (error: Error) => void): void;
  on(event: 'request', listener: (request: { url(): string }) => void): void;
}

/** What a page did since watchPage: its console errors and uncaught errors, and every URL it asked for. */
export interface PageWatch {
  readonly errors: readonly string[];
  readonly fetched: readonly string[];
}

/** Listens to `page`; the lists grow as it runs. */
export function watchPage(page: WatchedPage): PageWatch {
  const errors: string[] = [];
  const fetched: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('request', (request) => fetched.push(request.url()));
  return { errors, fetched };
}
