/**
 * Every error of a routes file at once (docs/routes.md), the file's shape and its references in
 * one run (issue 46): the compiler (compile.ts) needs a file of the schema's shape, so a file the
 * schema refuses is salvaged first, and the compiler's errors about the parts that had their
 * shape are added to the schema's. `mathc` for `match` and an undeclared scope are both said.
 *
 * The salvage is conservative: nothing it reports may be an artefact of the repair.
 * - An unknown key is left out (as if it were not there).
 * - A route with a bad or missing id, path, match or credentials keeps its index (the pointers
 *   stay its own) but not its place: it is put where it meets no other route; only its own
 *   references (its methods' scopes, its upstream, its rate limit) are judged. A bad method, upstream, rate limit or weakens of a route is left out of it.
 * - A scope or an upstream the schema refuses is left out, and a route (or a plan) naming it is
 *   not told again that it is undeclared.
 * - Anything wrong with the file as a whole (not a mapping, its version, `routes` not a list):
 *   the schema's errors alone, as before.
 * Whatever the compiler then says at a place the schema already judged, or about a repaired
 * part, is dropped.
 */
import type { ErrorObject } from 'ajv';
import type { CompileResult } from './compile.js';
import type { RouteFileError, RoutesFile } from './types.js';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
/** An object without some keys, made anew (a `__proto__` key stays an own key, never a prototype). */
const without = (value: Json, keys: ReadonlySet<string>): Json => Object.fromEntries(Object.entries(value).filter(([key]) => !keys.has(key)));

/** What the schema said about one route. */
type RouteDamage = { whole: boolean; unknown: Set<string>; fields: Set<string>; methods: Set<string>; methodsWhole: boolean };

/** The route fields whose repair moves the route out of every other route's way. */
const PLACE_FIELDS = ['id', 'path', 'match', 'credentials'];

export function referenceErrorsDespiteShape(
  value: unknown,
  raw: readonly ErrorObject[],
  shapeErrors: readonly RouteFileError[],
  valid: (file: unknown) => boolean,
  compile: (file: RoutesFile) => CompileResult,
): RouteFileError[] {
  if (!isObject(value) || !Array.isArray(value['routes'])) return [];
  const unknownTop = new Set<string>();
  const unknownIn = { upstreams: new Map<string, Set<string>>() };
  const brokenScopes = new Set<string>();
  const brokenUpstreams = new Set<string>();
  const routes = new Map<number, RouteDamage>();
  const damage = (n: number) => {
    let found = routes.get(n);
    if (found === undefined) routes.set(n, (found = { whole: false, unknown: new Set(), fields: new Set(), methods: new Set(), methodsWhole: false }));
    return found;
  };
  for (const error of raw) {
    const steps = error.instancePath === '' ? [] : error.instancePath.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    const name = (error as { propertyName?: string }).propertyName;
    if (error.keyword === 'propertyNames') continue; // its name's own error (below) says it
    if (name !== undefined) steps.push(name);
    if (error.keyword === 'required') steps.push(String(error.params.missingProperty));
    const unknown = error.keyword === 'additionalProperties' ? String(error.params.additionalProperty) : undefined;
    const [part, key, field, method] = steps;
    if (part === undefined) {
      if (unknown === undefined) return []; // the file as a whole
      unknownTop.add(unknown);
    } else if (part === 'routes' && key !== undefined) {
      const route = damage(Number(key));
      if (field === undefined) {
        if (unknown !== undefined) route.unknown.add(unknown);
        else route.whole = true;
      } else if (field === 'methods') {
        if (unknown !== undefined) route.methods.add(unknown);
        else if (method !== undefined) route.methods.add(method);
        else route.methodsWhole = true;
      } else route.fields.add(field);
    } else if (part === 'scopes' && key !== undefined) brokenScopes.add(key);
    else if (part === 'upstreams' && key !== undefined) {
      if (unknown !== undefined && field === undefined) unknownIn.upstreams.set(key, (unknownIn.upstreams.get(key) ?? new Set()).add(unknown));
      else brokenUpstreams.add(key);
    } else return []; // version, or a section that is not what it must be
  }

  const upstreams = isObject(value['upstreams'])
    ? Object.fromEntries(Object.entries(value['upstreams']).filter(([name]) => !brokenUpstreams.has(name)).map(([name, spec]) => [name, isObject(spec) ? without(spec, unknownIn.upstreams.get(name) ?? new Set()) : spec]))
    : value['upstreams'];
  const scopes = isObject(value['scopes']) ? without(value['scopes'], brokenScopes) : value['scopes'];
  const moved = new Set<number>();
  const salvagedRoutes = (value['routes'] as unknown[]).map((route, n) => {
    const hurt = routes.get(n);
    if (hurt === undefined) return route;
    // Under the gateway's own paths: the compiler judges its methods, then keeps it out of the
    // table (a reserved path), so it meets no other route, in nesting or in place.
    const placeholder = { id: `unchecked-route-${n}`, path: `/.well-known/authgate-unchecked-${n}`, match: 'exact' };
    if (hurt.whole || !isObject(route)) {
      moved.add(n);
      return { ...placeholder, methods: {} };
    }
    const kept = without(route, new Set([...hurt.unknown, ...hurt.fields]));
    const methods = hurt.methodsWhole || !isObject(route['methods']) ? {} : without(route['methods'], hurt.methods);
    if (!PLACE_FIELDS.some((field) => hurt.fields.has(field))) return { ...kept, methods };
    moved.add(n);
    // A route out of every other's way: a place of its own, no weakens; its credentials as they were when they were right.
    const credentials = hurt.fields.has('credentials') ? (Object.values(methods).every((scope) => scope === 'public') ? 'none' : undefined) : kept['credentials'];
    const { weakens: _weakens, credentials: _credentials, ...rest } = kept;
    return { ...rest, ...placeholder, ...(!hurt.fields.has('id') && typeof kept['id'] === 'string' && { id: kept['id'] }), ...(credentials !== undefined && { credentials }), methods };
  });
  const salvaged = { ...without(value, unknownTop), ...(upstreams !== undefined && { upstreams }), ...(scopes !== undefined && { scopes }), routes: salvagedRoutes };
  if (!valid(salvaged)) return []; // a repair this module did not foresee: the schema's errors alone
  const compiled = compile(salvaged as unknown as RoutesFile);
  if (compiled.ok) return [];

  /** Whether the compiler's error repeats what the schema said, or is about a part the salvage changed. */
  const judged = (error: RouteFileError): boolean => {
    if (shapeErrors.some((shape) => error.pointer === shape.pointer || error.pointer.startsWith(`${shape.pointer}/`))) return true;
    const [, part, key, field, method] = error.pointer.split('/');
    // A plan naming a scope the schema refused (plans, issue 47): not told again that it is undeclared.
    if (part === 'plans' && key !== undefined && field === 'scopes' && method !== undefined) {
      const plan = isObject(value['plans']) ? value['plans'][key] : undefined;
      const scope = isObject(plan) && Array.isArray(plan['scopes']) ? (plan['scopes'] as unknown[])[Number(method)] : undefined;
      return typeof scope === 'string' && brokenScopes.has(scope);
    }
    // An issuer's scopeMap naming a scope the schema refused (issue 49): not told again that it is undeclared.
    if (part === 'issuers' && key !== undefined && field === 'scopeMap' && method !== undefined) {
      const issuer = isObject(value['issuers']) ? value['issuers'][key] : undefined;
      const map = isObject(issuer) && isObject(issuer['scopeMap']) ? issuer['scopeMap'] : undefined;
      const scope = map === undefined ? undefined : map[method.replace(/~1/g, '/').replace(/~0/g, '~')];
      return typeof scope === 'string' && brokenScopes.has(scope);
    }
    if (part !== 'routes' || key === undefined) return false;
    const n = Number(key);
    const hurt = routes.get(n);
    const route = salvagedRoutes[n] as Json;
    if (hurt?.whole === true) return true;
    if (moved.has(n) && (field === undefined || field === 'path' || field === 'id')) return true;
    if (field === 'methods' && method === undefined && hurt !== undefined && (hurt.methodsWhole || hurt.methods.size > 0)) return true;
    if (field === 'methods' && method !== undefined) {
      const scope = (route['methods'] as Json)[method];
      if (typeof scope === 'string' && brokenScopes.has(scope)) return true;
      if (hurt?.fields.has('credentials') === true) return true; // public or not was the broken part's to say
    }
    return field === 'upstream' && typeof route['upstream'] === 'string' && brokenUpstreams.has(route['upstream']);
  };
  const [weakens, others] = [compiled.errors.filter((e) => /^\/routes\/\d+\/weakens$/.test(e.pointer)), compiled.errors.filter((e) => !/^\/routes\/\d+\/weakens$/.test(e.pointer))];
  const kept = others.filter((error) => !judged(error));
  // A route the salvage changed, or the compiler left out for a reason said above or hidden here,
  // is no subtree a `weakens` can be judged against: by its id in the file as written.
  const uncertain = new Set<number>(routes.keys());
  for (const error of others) if (judged(error) && /^\/routes\/\d+/.test(error.pointer)) uncertain.add(Number(error.pointer.split('/')[2]));
  const original = value['routes'] as unknown[];
  const uncertainIds = new Set([...uncertain].flatMap((n) => [original[n], salvagedRoutes[n]].map((route) => (isObject(route) ? route['id'] : undefined))));
  // An id the schema refused may be the one a `weakens` meant: then naming no route is not said.
  const someIdBroken = [...routes.values()].some((hurt) => hurt.whole || hurt.fields.has('id'));
  const ids = new Set(salvagedRoutes.map((route, n) => (isObject(route) && !routes.has(n) ? route['id'] : undefined)));
  const weakensKept = weakens.filter((error) => {
    if (shapeErrors.some((shape) => error.pointer === shape.pointer)) return false;
    const n = Number(error.pointer.split('/')[2]);
    const target = (salvagedRoutes[n] as Json)['weakens'];
    return !moved.has(n) && !uncertainIds.has(target) && !(someIdBroken && !ids.has(target));
  });
  return [...kept, ...weakensKept];
}
