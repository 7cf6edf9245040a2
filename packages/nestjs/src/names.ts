/** A rule name made of a controller's (and a handler's) name: `SearchController.findAll` gives `search_controller_find_all`. */
export function ruleNameOf(controller: string, handler?: string): string {
  const words = [controller, handler ?? '']
    .join(' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .match(/[a-z0-9]+/g);
  return words?.join('_').slice(0, 100) || 'route';
}

/** How errors and notices name a controller or handler: `SearchController.findAll`. */
export function ownerLabel(controller: string, handler?: string): string {
  return handler === undefined ? controller : `${controller}.${handler}`;
}
