/** The part of `Headers` the client reads, so that a plain header map (undici's, a test's) can be adapted. */
export interface HeaderSource {
  get(name: string): string | null;
}
