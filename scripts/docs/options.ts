/**
 * The options reference, read with the TypeScript compiler from the option interfaces themselves: each member's
 * name, whether it is optional, its type and its TSDoc (with any @default tag). Adding an option to an interface
 * with a doc comment is all it takes to document it.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { cell, GENERATED_NOTICE } from './markdown.js';
import { OPTION_SOURCES, type OptionSource } from './optionSources.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** One documented option. */
export interface OptionDoc {
  readonly name: string;
  readonly optional: boolean;
  readonly type: string;
  readonly doc: string;
}

/** One options object: its section and its members. */
export interface OptionSection extends OptionSource {
  readonly options: readonly OptionDoc[];
}

/** The root tsconfig's paths: `@sluice/core/http` → its source file. */
function compilerSetup(): { options: ts.CompilerOptions; entries: Map<string, string> } {
  const file = join(ROOT, 'tsconfig.json');
  const config = ts.readConfigFile(file, ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const paths = parsed.options.paths ?? {};
  const entries = new Map(Object.entries(paths).map(([name, [path]]) => [name, join(ROOT, path ?? '')]));
  return { options: { ...parsed.options, noEmit: true }, entries };
}

/** Tags that are not TSDoc's: `@sluice/client` in running text is a package, not a tag. */
const TSDOC_TAGS = new Set([
  'default',
  'defaultValue',
  'deprecated',
  'see',
  'example',
  'param',
  'returns',
  'internal',
]);

/** `{@link NAME}` as the value of the constant it names when that is a literal (`1000`), else as code. */
function linksResolved(text: string, declaration: ts.Node | undefined, checker: ts.TypeChecker): string {
  return text.replace(/\{@link\s+([\w.]+)\s*\}/g, (_, name: string) => {
    const found = declaration
      ? checker
          .getSymbolsInScope(declaration, ts.SymbolFlags.Variable | ts.SymbolFlags.Alias)
          .find((item) => item.name === name)
      : undefined;
    // An exported constant is found as its local (ExportValue) symbol; an imported one as an alias.
    const local = found && checker.getExportSymbolOfSymbol(found);
    const symbol = local && local.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(local) : local;
    const initializer = (symbol?.valueDeclaration as ts.VariableDeclaration | undefined)?.initializer;
    const literal = initializer && (ts.isNumericLiteral(initializer) || ts.isStringLiteral(initializer));
    return literal ? `\`${initializer.getText().replaceAll('_', '')}\`` : `\`${name}\``;
  });
}

function docOf(symbol: ts.Symbol, checker: ts.TypeChecker): string {
  const parts = [ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim()];
  for (const tag of symbol.getJsDocTags(checker)) {
    const text = ts.displayPartsToString(tag.text).trim();
    if (tag.name === 'default' || tag.name === 'defaultValue') parts.push(`Default: ${text}.`);
    else if (!TSDOC_TAGS.has(tag.name))
      parts[parts.length - 1] += ` @${tag.name}${text.startsWith('/') ? '' : ' '}${text}`;
  }
  return linksResolved(
    parts.filter(Boolean).join(' '),
    symbol.valueDeclaration ?? symbol.declarations?.[0],
    checker,
  );
}

/** Every section of OPTION_SOURCES with its members, read from the sources. */
export function optionSections(sources: readonly OptionSource[] = OPTION_SOURCES): OptionSection[] {
  const { options, entries } = compilerSetup();
  const files = sources.map((source) => {
    if (!source.entry.startsWith('@')) return join(ROOT, source.entry);
    const file = entries.get(source.entry);
    if (file === undefined)
      throw new Error(`options reference: ${source.entry} is not in tsconfig.json's paths`);
    return file;
  });
  const program = ts.createProgram([...new Set(files)], options);
  const checker = program.getTypeChecker();
  return sources.map((source, index) => {
    const file = program.getSourceFile(files[index] ?? '');
    const module = file && checker.getSymbolAtLocation(file);
    const exported =
      module && checker.getExportsOfModule(module).find((item) => item.name === source.interface);
    if (exported === undefined)
      throw new Error(`options reference: ${source.entry} exports no ${source.interface}`);
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const declared = checker.getDeclaredTypeOfSymbol(symbol);
    const own = new Set(symbol.declarations ?? []);
    const members = checker.getPropertiesOfType(declared).filter((member) => {
      if (!source.ownOnly) return true;
      return (member.declarations ?? []).some((declaration) => own.has(declaration.parent as ts.Declaration));
    });
    const shown = members.map((member): OptionDoc => {
      const declaration = member.valueDeclaration ?? member.declarations?.[0];
      const type = declaration
        ? checker.typeToString(
            checker.getTypeOfSymbolAtLocation(member, declaration),
            declaration,
            ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseAliasDefinedOutsideCurrentScope,
          )
        : 'unknown';
      return {
        name: member.name,
        optional: (member.flags & ts.SymbolFlags.Optional) !== 0,
        type: type.replace(/ \| undefined$/, ''),
        doc: docOf(member, checker),
      };
    });
    return { ...source, options: shown };
  });
}

/** The anchor of a section: `RedisStore` → `redisstore`, as VitePress slugs headings. */
export function sectionAnchor(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

function section(part: OptionSection): string {
  const intro = part.ownOnly
    ? `Every [adapter option](#${sectionAnchor(OPTION_SOURCES[1]?.title ?? '')}), and:`
    : `\`${part.interface}\` ${part.entry.startsWith('@') ? 'from' : 'in'} \`${part.entry}\`.`;
  const rows = part.options.map(
    (option) =>
      `| \`${option.name}\` | ${option.optional ? 'no' : 'yes'} | \`${cell(option.type)}\` | ${cell(option.doc || '—')} |`,
  );
  return `## ${part.title}

${intro}

| option | required | type | meaning |
|---|---|---|---|
${rows.join('\n')}
`;
}

/** docs/reference/options.md. */
export function optionsPage(sections: readonly OptionSection[] = optionSections()): string {
  return `${GENERATED_NOTICE('the option interfaces (their TSDoc) of each package')}
# Options reference

Every option of every options object, read from the TypeScript interfaces the packages export: the text is
each option's own doc comment, so this page follows the code. Unknown options are refused at start-up with a
did-you-mean (\`timeoutMS\` → \`timeoutMs\`).

${sections.map(section).join('\n')}`;
}
