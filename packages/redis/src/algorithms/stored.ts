/**
 * Lua port of core's stored.ts: numbers read back from a key may come from a clock that has since stepped
 * back or from whatever else wrote the key. Each fragment that reads counts starts with these (the script
 * defines a fragment only when a call uses it).
 */
export const storedLua = `
-- A stored count of units as a whole number >= 0; anything that is not a finite number counts as 0.
local function stored_count(x)
  if x ~= nil and x > 0 and x < math.huge then return math.ceil(x) end
  return 0
end

-- Whether a number read back is one: not nil, NaN or infinite.
local function finite(x)
  return x ~= nil and x == x and x > -math.huge and x < math.huge
end
`;
