import { ConfigError } from '../base/errors.js';
import type { NoticeLogger } from '../base/notices.js';
import type { CompiledRules, Descriptors } from '../rules/contract.js';
import type { Store } from '../store/contract.js';
import { tagFor } from '../store/tags.js';

/** What lifting a ban needs from the limiter: its rules now, its stores as given, its key secret and logs. */
export interface UnbanContext {
  readonly rules: CompiledRules;
  readonly stores: { readonly store: Store; readonly local: Store };
  readonly secret: string | undefined;
  readonly logger: NoticeLogger;
  readonly onUnban: (rule: string, lifted: boolean, tag: string) => void;
}

/** Log code of a lifted ban: an operator's act, logged every time (with the hashed key, never the key). */
export const BAN_LIFTED = 'SLUICE_BAN_LIFTED';

/**
 * Lifts the ban of one key under a rule with `ban`: the key is found from `descriptors` as the limiter finds
 * it (the rule's key descriptors, hashed into its tag), in the store the rule counts in. The key's violations
 * and escalation level go with it. Logged and reported to the observer; true when the key had a ban state.
 * Rejects with a ConfigError for an unknown rule, a rule without `ban`, a missing key descriptor or a store
 * that cannot lift bans.
 */
export async function unbanKey(
  context: UnbanContext,
  ruleName: string,
  descriptors: Descriptors,
): Promise<boolean> {
  const rule = context.rules.rules.find((r) => r.name === ruleName);
  if (rule === undefined) throw new ConfigError(`unban: no rule named ${JSON.stringify(ruleName)}`);
  if (rule.ban === undefined) throw new ConfigError(`unban: rule ${ruleName} has no ban`);
  const tag = tagFor(rule, descriptors, context.secret);
  if (tag === undefined) {
    const missing = rule.key.filter((name) => descriptors[name] === undefined);
    throw new ConfigError(`unban: rule ${ruleName} is keyed on ${missing.join(', ')}: give its value`);
  }
  const store = rule.scope === 'local' ? context.stores.local : context.stores.store;
  if (typeof store.unban !== 'function') throw new ConfigError('unban: the store cannot lift bans');
  const lifted = await store.unban(rule.name, tag);
  context.logger.warn(
    `${BAN_LIFTED}: ban of rule ${rule.name} lifted for key ${tag}${lifted ? '' : ' (it had none)'}`,
  );
  context.onUnban(rule.name, lifted, tag);
  return lifted;
}
