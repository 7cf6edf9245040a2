import { HttpException } from '@nestjs/common';
import type { DeniedResponse } from '@sluice/core/http';

/**
 * What the guard throws for a denied request: Nest's exception handling sends `denied.body` as JSON with
 * `denied.status` (429; 503 when a rule failed closed; 403 for a `deny` rule), the headers being set
 * already. Catch it in an exception filter to send your own denial.
 */
export class RateLimitException extends HttpException {
  /** Status, headers, body and decision of the denial. */
  readonly denied: DeniedResponse;

  constructor(denied: DeniedResponse) {
    super(denied.body, denied.status);
    this.denied = denied;
  }
}
