/** The door of regions/: what the engine reads of the global budgets (see budgets.ts). */
export { type BudgetParts, type BudgetView, RegionalBudgets } from './budgets.js';
export { type RegionScheduler, type RegionSettings, type RegionsOptions, regionSettings } from './options.js';
export { REGION_NOTICES } from './partition.js';
