// Which class a name in a type hint means, for the typed clients (types.ts): what the hint's own file binds it to (its
// import: `from m import Point as GeoPoint` and `import m as om` with `om.Point` both name Point of m, followed through
// m's own imports), else its own declaration (the later one where the file has both); a name the file does not bind
// (an import under `if TYPE_CHECKING:`) is the project's declaration of that name, when it has only one. A name the
// file imports from outside the project is no declaration of the project's.
import type { FileModel, ProjectModel, TypeDeclaration } from '../project/model';
import { resolveModule } from '../project/analyze';

/** A TypedDict, dataclass or pydantic model of the project, and its file. */
export type Found = { file: FileModel; decl: TypeDeclaration };

/** The last segment of a dotted name: `models.Point` -> `Point`. */
const lastSegment = (name: string) => name.slice(name.lastIndexOf('.') + 1);

/** How deep a name is followed from module to module (`from pkg import Point`, pkg importing it from pkg.models). */
const MAX_HOPS = 8;

/** What a module-level import binds a name to: `from m import a as name`, or a module (`import m as name`). */
interface Binding {
  /** The module, absolute. */
  module: string;
  /** `from m import a as name`: `a`. Absent where the name is a module. */
  original?: string;
  /** `import a.b` binds `a`, and `a.b.X` names X of a.b; `import a.b as m` binds the module a.b itself (`m.X`). */
  top?: boolean;
  line: number;
}

/** The project's declarations, by name, file and module. */
export class Declarations {
  private readonly declarations = new Map<string, Found[]>();
  private readonly files = new Map<string, FileModel>();
  private readonly modules = new Map<string, FileModel[]>();

  constructor(private readonly model: ProjectModel) {
    for (const file of model.files) {
      this.files.set(file.file, file);
      this.modules.set(file.module, [...(this.modules.get(file.module) ?? []), file]);
      for (const decl of file.types ?? []) {
        const list = this.declarations.get(decl.name) ?? [];
        list.push({ file, decl });
        this.declarations.set(decl.name, list);
      }
    }
  }

  /** The declaration a name in `fromFile` refers to. */
  resolve(name: string, fromFile: string): Found | undefined {
    const file = this.files.get(fromFile);
    const bound = file ? this.lookup(file, name, 0) : undefined;
    if (bound !== undefined) return bound ?? undefined;
    const candidates = this.declarations.get(lastSegment(name));
    return candidates?.length === 1 ? candidates[0] : undefined;
  }

  /**
   * What `file` binds `name` to: a declaration, null where it binds the name to something else (a module or a class
   * from outside the project, a class of the project that is no JSON shape), undefined where it does not bind it.
   */
  private lookup(file: FileModel, name: string, hops: number): Found | null | undefined {
    if (hops > MAX_HOPS) return null;
    const dot = name.indexOf('.');
    const head = dot < 0 ? name : name.slice(0, dot);
    const own = dot < 0 ? file.types?.find((d) => d.name === name) : undefined;
    const binding = this.binding(file, head);
    if (own && (!binding || binding.line < own.nameRange.start.line)) return { file, decl: own };
    if (!binding) return dot < 0 ? this.starred(file, name, hops) : undefined;
    const path = dot < 0 ? [] : name.slice(dot + 1).split('.');
    let module: string;
    let original: string;
    if (binding.original !== undefined && !path.length) {
      module = binding.module;
      original = binding.original;
    } else {
      // A module's member (`om.Point`, `models.Point` after `from pkg import models`, `pkg.models.Point`).
      if (!path.length) return null;
      original = path.pop()!;
      const prefix = binding.original !== undefined ? [binding.module, binding.original] : binding.top ? [head] : [binding.module];
      module = [...prefix, ...path].join('.');
    }
    return this.inModule(module, original, hops);
  }

  /** The declaration `original` of a module: declared there, imported there, or (a package) declared in one of its modules. */
  private inModule(module: string, original: string, hops: number): Found | null {
    const target = this.moduleFile(module);
    if (!target) return null;
    const found = this.lookup(target, original, hops + 1);
    if (found !== undefined) return found;
    // A package's __init__ that re-exports from its modules without mentioning strato (whose imports the analysis
    // does not record): the package's one declaration of that name.
    const inside = (this.declarations.get(original) ?? []).filter((c) => c.file.module.startsWith(`${target.module}.`));
    return inside.length === 1 ? inside[0] : null;
  }

  /** `from m import *` of a module of the project that has the name. */
  private starred(file: FileModel, name: string, hops: number): Found | undefined {
    for (const imp of file.imports ?? []) {
      if (!imp.names.includes('*')) continue;
      const target = this.moduleFile(this.absolute(file, imp.module));
      const found = target && this.lookup(target, name, hops + 1);
      if (found) return found;
    }
    return undefined;
  }

  /** The last module-level import of `file` that binds `name`. */
  private binding(file: FileModel, name: string): Binding | undefined {
    let out: Binding | undefined;
    for (const imp of file.imports ?? []) {
      const i = imp.names.indexOf(name);
      if (i < 0) continue;
      const line = imp.range.start.line;
      if (imp.imported) {
        out = { module: this.absolute(file, imp.module), original: imp.imported[name] ?? name, line };
        continue;
      }
      // `import a, b.c as d`: the modules in the order of the names.
      const module = imp.module.split(',').map((m) => m.trim())[i] ?? imp.module;
      out = { module, top: module.split('.')[0] === name, line };
    }
    return out;
  }

  /** The module an import names, absolute (`.models` from `pkg/w.py`, or from `pkg/__init__.py`, is `pkg.models`). */
  private absolute(file: FileModel, module: string): string {
    const from = /(^|\/)__init__\.pyi?$/.test(file.file) ? `${file.module}.__init__` : file.module;
    return resolveModule(from, module);
  }

  /** The project's file of a module (`src/pkg/models.py` for `pkg.models` where no `pkg/models.py` is, when only one). */
  private moduleFile(module: string): FileModel | undefined {
    const exact = this.modules.get(module);
    if (exact) return exact[0];
    const suffix = this.model.files.filter((f) => f.module.endsWith(`.${module}`));
    return suffix.length === 1 ? suffix[0] : undefined;
  }
}
