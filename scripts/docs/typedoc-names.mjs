// A TypeDoc plugin: names each entry point's module after its import specifier (`@sluice/core/http`) instead of
// its folder (`core/src/http`), so the API reference reads as users import.
import { Converter, ReflectionKind } from 'typedoc';

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const module of context.project.getReflectionsByKind(ReflectionKind.Module)) {
      const match = /^([a-z-]+)\/src(?:\/(.+))?$/.exec(module.name);
      if (match) module.name = `@sluice/${match[1]}${match[2] ? `/${match[2]}` : ''}`;
    }
  });
}
