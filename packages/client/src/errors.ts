/** Codes of the errors @sluice/client throws. */
export type ClientErrorCode = 'ERR_SLUICE_CLIENT_CONFIG';

/** A wrong option given to `createFetch` (a negative wait, a ratio above 1, ...). */
export class ClientConfigError extends Error {
  readonly code: ClientErrorCode = 'ERR_SLUICE_CLIENT_CONFIG';

  constructor(message: string) {
    super(message);
    this.name = 'ClientConfigError';
  }
}
