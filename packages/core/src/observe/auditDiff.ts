import type { CompiledRule, CompiledRules } from '../rules/contract.js';
import type { AuditEntry } from '../store/audit.js';

/** Who and when, for the entries of one act. */
interface Stamp {
  readonly at: number;
  readonly actor: string;
}

const names = (rules: readonly CompiledRule[]): string[] => rules.map((rule) => rule.name);

/**
 * The entries a swap of rule tables makes: the reload (`from` null when the process starts on `after`), then one
 * per rule whose mode or rollout changed, found by name in both tables. Rules added or removed are named in the
 * reload's details, as are those changed in any other way.
 */
export function reloadEntries(
  before: CompiledRules | undefined,
  after: CompiledRules,
  stamp: Stamp,
): AuditEntry[] {
  const domain = after.domain;
  const old = new Map((before?.rules ?? []).map((rule) => [rule.name, rule]));
  const kept = after.rules.filter((rule) => old.has(rule.name));
  const changed = kept.filter((rule) => JSON.stringify(rule) !== JSON.stringify(old.get(rule.name)));
  const reload: AuditEntry = {
    ...stamp,
    kind: 'reload',
    domain,
    rule: null,
    details: {
      from: before?.version ?? null,
      to: after.version,
      rules: after.rules.length,
      ...(before === undefined
        ? {}
        : {
            added: names(after.rules.filter((rule) => !old.has(rule.name))),
            removed: names(before.rules.filter((rule) => !after.rules.some((r) => r.name === rule.name))),
            changed: names(changed),
          }),
    },
  };
  const entries = [reload];
  for (const rule of changed) {
    const was = old.get(rule.name)!;
    const version = { from: before!.version, to: after.version };
    if (was.mode !== rule.mode)
      entries.push({
        ...stamp,
        kind: 'mode',
        domain,
        rule: rule.name,
        details: { was: was.mode, now: rule.mode, ...version },
      });
    if (was.rollout !== rule.rollout)
      entries.push({
        ...stamp,
        kind: 'rollout',
        domain,
        rule: rule.name,
        details: { was: was.rollout, now: rule.rollout, ...version },
      });
  }
  return entries;
}
