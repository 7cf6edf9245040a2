/**
 * The rules reference, read from the rule schema itself: each field's type, whether it is required, its default
 * and its allowed values come from walking the zod schema (a custom field's type from its own error message,
 * "must be <what>, got …"), so the page cannot drift from what the validator accepts. The prose beside each
 * field is RULE_FIELD_NOTES.
 */
// The schema module itself: `documentSchema` (the top of a file) is not part of core's public entry.

import type { z } from 'zod';
import { documentSchema, ruleSchema } from '../../packages/core/src/rules/schema.js';
import { cell, GENERATED_NOTICE } from './markdown.js';
import { RULE_FIELD_NOTES } from './ruleFields.js';

/** One field of a rules file as the reference lists it. */
export interface RuleField {
  /** Dotted path: `limit.per`, `adaptive.latency.max`. */
  readonly path: string;
  readonly required: boolean;
  readonly type: string;
  /** The default as YAML would show it, when the schema fills one in. */
  readonly defaultValue?: string;
  /** The choices of an enum field. */
  readonly values?: readonly string[];
}

type Schema = z.core.$ZodType;

/** A value no field accepts: its error message names what the field takes. */
const JUNK = null;

function defOf(schema: Schema): z.core.$ZodTypeDef & Record<string, unknown> {
  return schema._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
}

/** What a custom field takes, from its error's "must be <what>, got …" (the one wording, fieldSchemas.ts). */
function customType(schema: Schema): string {
  const result = (schema as unknown as z.ZodType).safeParse(JUNK);
  const message = result.success ? '' : (result.error.issues[0]?.message ?? '');
  const what = /^must be (.*), got /s.exec(message)?.[1];
  if (what === undefined)
    throw new Error(`rules reference: cannot tell what a field takes from "${message}"`);
  return what;
}

interface Walked {
  readonly type: string;
  readonly values?: readonly string[];
  /** Object shapes below this field, whose fields are listed under its path. */
  readonly shapes: readonly Record<string, Schema>[];
}

/** The type of `schema` in words, with the object shapes it holds. */
function describe(schema: Schema): Walked {
  const def = defOf(schema);
  switch (def.type) {
    case 'optional':
    case 'default':
    case 'readonly':
    case 'nonoptional':
      return describe(def.innerType as Schema);
    case 'boolean':
      return { type: 'true or false', shapes: [] };
    case 'string':
      return { type: 'text', shapes: [] };
    case 'unknown':
      return { type: 'a rule (next table)', shapes: [] };
    case 'enum': {
      const values = Object.values(def.entries as Record<string, string>);
      return { type: 'one of the values', values, shapes: [] };
    }
    case 'custom':
      return { type: customType(schema), shapes: [] };
    case 'array': {
      const item = describe(def.element as Schema);
      return { type: `a list of: ${item.type}`, values: item.values, shapes: item.shapes };
    }
    case 'record': {
      const value = describe(def.valueType as Schema);
      return { type: `names mapped to: ${value.type}`, shapes: value.shapes };
    }
    case 'object': {
      const shape = def.shape as Record<string, Schema>;
      const fields = Object.entries(shape).map(([name, field]) => (isOptional(field) ? `${name}?` : name));
      return { type: `{${fields.join(', ')}}`, shapes: [shape] };
    }
    case 'union': {
      const options = (def.options as Schema[]).map(describe);
      const values = options.flatMap((option) => option.values ?? []);
      return {
        type: options.map((option) => (option.values ? option.values.join(', ') : option.type)).join(' | '),
        ...(values.length > 0 ? { values } : {}),
        shapes: options.flatMap((option) => option.shapes),
      };
    }
    default:
      throw new Error(`rules reference: no wording for a zod ${def.type} field`);
  }
}

function isOptional(schema: Schema): boolean {
  const { type } = defOf(schema);
  return type === 'optional' || type === 'default';
}

function defaultOf(schema: Schema): string | undefined {
  const def = defOf(schema);
  if (def.type !== 'default') return undefined;
  const value = typeof def.defaultValue === 'function' ? def.defaultValue() : def.defaultValue;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Every field below `shape`, parents before their children, in the schema's order. */
function fieldsOf(shape: Record<string, Schema>, prefix = ''): RuleField[] {
  return Object.entries(shape).flatMap(([name, schema]) => {
    const path = `${prefix}${name}`;
    const walked = describe(schema);
    const defaultValue = defaultOf(schema);
    const field: RuleField = {
      path,
      required: !isOptional(schema),
      type: walked.type,
      ...(defaultValue === undefined ? {} : { defaultValue }),
      ...(walked.values ? { values: walked.values } : {}),
    };
    return [field, ...walked.shapes.flatMap((inner) => fieldsOf(inner, `${path}.`))];
  });
}

/** The fields of the top of a rules file and of one rule. */
export function ruleFields(): { readonly document: RuleField[]; readonly rule: RuleField[] } {
  return {
    document: fieldsOf(documentSchema.shape as unknown as Record<string, Schema>),
    rule: fieldsOf(ruleSchema.shape as unknown as Record<string, Schema>),
  };
}

/** What a field takes: its choices when it is an enum (or a union with one), else its type in words. */
function takes(field: RuleField): string {
  if (field.values === undefined) return cell(field.type);
  const choices = field.values.map((value) => `\`${value}\``).join(', ');
  return field.type === 'one of the values'
    ? choices
    : `${cell(field.type.replace(field.values.join(', '), choices))}`;
}

// Four columns, so the table fits the page: whether a field is required is said beside its name.
function table(fields: readonly RuleField[]): string {
  const rows = fields.map((field) => {
    const note = RULE_FIELD_NOTES[field.path];
    if (note === undefined)
      throw new Error(`rules reference: no note for field ${field.path} (ruleFields.ts)`);
    const shown = field.defaultValue === undefined ? '' : `\`${field.defaultValue}\``;
    const name = `<span id="${anchor(field.path)}">\`${field.path}\`</span>${field.required ? ' (required)' : ''}`;
    return `| ${name} | ${takes(field)} | ${shown} | ${cell(note)} |`;
  });
  return ['| field | takes | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/** The anchor of a field's row: `limit.per` → `field-limit-per`. */
export function anchor(path: string): string {
  return `field-${path.replaceAll('.', '-').replaceAll('_', '-')}`;
}

/** docs/reference/rules.md. */
export function rulesPage(): string {
  const { document, rule } = ruleFields();
  return `${GENERATED_NOTICE('packages/core/src/rules/schema.ts')}
# Rules reference

Every field a rules file takes, read from the schema the validator uses: types, defaults and allowed values
cannot drift from what \`sluice validate\` and \`createLimiter\` accept. Nested fields are listed under their
parent (\`limit.per\`). Unknown fields are errors, with a did-you-mean (\`limt\` → \`limit\`).

## The file

${table(document)}

## A rule

${table(rule)}
`;
}
