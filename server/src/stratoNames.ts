// Which local names a file binds to strato's `Endpoint`, its catalog enums and the module itself, as the analysis
// read them from the syntax tree: hover and completion only speak up where the code really uses strato.
import { enumClasses } from '../../engine/src/catalog';
import type { FileModel } from '../../engine/src/project';

export interface StratoNames {
  /** Local names of `Endpoint` (`Endpoint`, or `E` after `from strato import Endpoint as E`). */
  endpoint: Set<string>;
  /** Local alias -> enum class (`GpuGroup`, `GpuType`, `CpuInstanceType`). */
  enums: Map<string, string>;
  /** Local names bound to the module (`strato`, `s` after `import strato as s`). */
  modules: Set<string>;
}

/** The analysis' bindings of this file, as sets for lookups. */
export function stratoNames(model: FileModel): StratoNames {
  const b = model.strato;
  return { endpoint: new Set(b.endpoint), enums: new Map(Object.entries(b.enums)), modules: new Set(b.modules) };
}

export function usesStrato(names: StratoNames): boolean {
  return names.endpoint.size > 0 || names.enums.size > 0 || names.modules.size > 0;
}

/** True when a dotted callee names strato's Endpoint. */
export function isEndpointCallee(callee: string | undefined, names: StratoNames): boolean {
  if (!callee) return false;
  if (names.endpoint.has(callee)) return true;
  const parts = callee.split('.');
  return parts.length === 2 && parts[1] === 'Endpoint' && names.modules.has(parts[0]);
}

/** The enum class a dotted prefix denotes (`GpuGroup`, `G`, `strato.GpuGroup`), if any. */
export function enumClassOf(prefix: string, names: StratoNames): string | undefined {
  const parts = prefix.split('.');
  if (parts.length === 1) return names.enums.get(parts[0]);
  if (parts.length === 2 && names.modules.has(parts[0]) && parts[1] in enumClasses) return parts[1];
  return undefined;
}

/** How this file can spell a member of an enum class, e.g. `GpuGroup.`, `G.` or `strato.GpuGroup.`. */
export function enumPrefix(cls: string, names: StratoNames): string | undefined {
  for (const [alias, c] of names.enums) if (c === cls) return `${alias}.`;
  const mod = names.modules.values().next();
  return mod.done ? undefined : `${mod.value}.${cls}.`;
}
