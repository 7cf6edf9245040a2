/**
 * What every response-field form writes into, in a file of its own: responses.ts and modelHeaders.ts both
 * build it, and neither needs the other for it.
 */

/** Header names and values to set on a response. */
export type HeaderValues = Record<string, string>;
