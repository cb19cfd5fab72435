// Cross-endpoint calls found statically: an endpoint whose function imports another endpoint's function inside its
// body (the contract's way), or names one defined in its own file or imported at the top of it, calls that endpoint.
// Deploy gives the API key only to endpoints that call others.
import type { ProjectModel } from '../project';
import { resolveModule } from '../project/analyze';

const cache = new WeakMap<ProjectModel, Map<string, Set<string>>>();

/** Endpoint name -> names of the endpoints it calls (worked out once per model: deploy asks for every endpoint). */
export function endpointCalls(model: ProjectModel): Map<string, Set<string>> {
  let calls = cache.get(model);
  if (!calls) cache.set(model, (calls = computeCalls(model)));
  return calls;
}

function computeCalls(model: ProjectModel): Map<string, Set<string>> {
  const owner = new Map<string, string>();
  for (const ep of model.endpoints) {
    // Queue functions and load-balanced routes alike: both are called with the key.
    for (const fn of ep.functions) owner.set(`${ep.module}:${fn.name}`, ep.name);
  }
  // Per module, the endpoint functions its top level binds: its own, and those it imports (`from a import f as g`).
  const visible = new Map<string, Map<string, string>>();
  for (const file of model.files) {
    const names = new Map<string, string>();
    for (const imp of file.imports) {
      const module = resolveModule(file.module, imp.module);
      for (const [bound, name] of Object.entries(imp.imported ?? {})) {
        const target = owner.get(`${module}:${name}`);
        if (target) names.set(bound, target);
      }
    }
    for (const ep of file.endpoints) for (const fn of ep.functions) names.set(fn.name, ep.name);
    visible.set(file.module, names);
  }
  const calls = new Map<string, Set<string>>();
  for (const ep of model.endpoints) {
    const targets = new Set<string>();
    const inScope = visible.get(ep.module);
    for (const fn of ep.functions) {
      for (const name of fn.bodyNames) {
        const target = inScope?.get(name);
        if (target && target !== ep.name) targets.add(target);
      }
      for (const imp of fn.bodyImports) {
        const module = resolveModule(ep.module, imp.module);
        for (const name of imp.names) {
          const target = owner.get(`${module}:${name}`);
          if (target && target !== ep.name) targets.add(target);
        }
      }
    }
    if (targets.size) calls.set(ep.name, targets);
  }
  return calls;
}
