export * from './errors.js';
export type * from './types.js';
