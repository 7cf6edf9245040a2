import type { Charge, Check } from '@sluice/core/store';

/** A check of a refund fragment: the charge it gives back rides with it (see `chargeExtra`). */
export interface RefundCheck extends Check {
  readonly charge: Charge;
}

/**
 * The `extra` argument of a refund: "<at> <resetMs>" of the charge (core's Charge), then what the algorithm
 * adds; '' for a charge that does not say when it was made (a leaky_bucket place: all of it is given back).
 */
export function chargeExtra(check: Check, more = ''): string {
  const charge = (check as Partial<RefundCheck>).charge;
  if (charge?.at === undefined) return '';
  return `${charge.at} ${charge.resetMs ?? '-'} ${more}`;
}

/**
 * Lua shared by the refund fragments (core's algorithms/charge.ts). Each refund fragment starts with it and
 * returns `false` (nothing written) when nothing of the charge counts any more.
 */
export const refundSharedLua = `
-- The charge from a refund's extra (see chargeExtra): at, resetMs (nil when not given), and the rest.
local function charge_of(extra)
  local at, reset, rest = string.match(extra, '^(%S+) (%S+) ?(.*)$')
  return tonumber(at), tonumber(reset), rest
end

-- Units (1/window of a request) of a bucket's charge not yet drained at now (core's undrained): all of
-- them for a charge that does not say when it was made.
local function undrained(cost, window, limit, now, at, reset)
  local units = cost * window
  if at == nil or reset == nil then return units end
  return math.min(units, math.max(0, (at + reset - now) * limit))
end
`;
