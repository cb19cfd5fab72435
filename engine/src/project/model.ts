// The project model: what engine/src/project extracts from Python source and every other part consumes
// (build, dev server, language server, tree views). Positions are 0-based, like LSP.
import type { EndpointKind, HttpMethod } from '../protocol/endpointKind';
import type { PodTemplateSpec, VolumeSpec } from '../catalog/parameterRules';

export interface Position {
  line: number;
  character: number;
}
export interface Range {
  start: Position;
  end: Position;
}

export type Severity = 'error' | 'warning' | 'information' | 'hint';

/** Stable rule codes; the same code and message reach the CLI, the Problems panel and the API. */
export type RuleCode =
  | 'syntax-error'
  | 'duplicate-endpoint-name'
  | 'gpu-and-cpu'
  | 'unknown-gpu'
  | 'unknown-cpu'
  | 'invalid-workers'
  | 'invalid-dependencies'
  | 'out-of-range'
  | 'invalid-env'
  | 'invalid-type'
  | 'not-literal'
  | 'route-path-slash'
  | 'route-path-reserved'
  | 'unknown-method'
  | 'duplicate-route'
  | 'lb-no-routes'
  | 'duplicate-queue-function'
  | 'top-level-import'
  | 'shadowed-module'
  | 'nested-endpoint'
  | 'pyproject-dependencies'
  | 'unread-file'
  | 'invalid-endpoint-name'
  | 'unknown-parameter'
  | 'duplicate-argument'
  | 'unknown-datacenter'
  | 'invalid-volume'
  | 'volume-datacenter'
  | 'cpu-datacenter'
  | 'id-and-image'
  | 'id-with-function'
  // `strato dev`: the saved project as a whole did not build (no endpoint left, a dependency that did not install).
  | 'project-error'
  // An import of the reference product's package (its import line not changed to strato).
  | 'reference-import'
  // A route's path parameter that is no Python identifier ({path:path}: a FastAPI convertor).
  | 'route-path-param'
  // A class endpoint with no public method: nothing a job can call.
  | 'class-without-method'
  // An endpoint's function or class whose name the module binds again below it: its worker would import that one.
  | 'redefined-function'
  // The orchestration tool's YAML files (engine/src/orchestration).
  | 'unknown-key'
  | 'missing-key'
  | 'invalid-value'
  | 'invalid-range'
  | 'invalid-size'
  | 'unknown-region'
  | 'unknown-backend'
  | 'unknown-volume'
  | 'duplicate-volume'
  | 'region-conflict'
  | 'clear-text-key';

export interface RelatedInfo {
  file: string;
  range: Range;
  message: string;
}

/** Data a quick fix needs; `kind` names the fix. */
export type FixData =
  | { kind: 'keep-gpu-or-cpu'; gpuArg: Range; cpuArg: Range }
  | { kind: 'swap-workers'; range: Range; replacement: string }
  | { kind: 'replace-value'; range: Range; replacement: string }
  | { kind: 'add-slash'; range: Range; replacement: string }
  | {
      kind: 'move-import';
      /** The whole import line(s) to delete. */
      importRange: Range;
      statement: string;
      packages: string[];
      /** Where to insert the statement: the first line of each function body that uses it, ready to apply. */
      targets: Array<{ position: Position; text: string }>;
    }
  | { kind: 'rename-endpoint'; range: Range; suggestion: string };

export interface Diagnostic {
  code: RuleCode;
  severity: Severity;
  /** One sentence: what is wrong and how to fix it. */
  message: string;
  /** Project-relative POSIX path. */
  file: string;
  range: Range;
  related?: RelatedInfo[];
  fix?: FixData;
}

export type ConfigSource = 'literal' | 'enum' | 'constant';

/** A decorator argument whose value could be evaluated statically. */
export interface ConfigValue {
  /** JSON value: string, number, boolean, null, array or object of those. Enum members become their string value. */
  value: unknown;
  /** Range of the whole `key=value` argument. */
  argRange: Range;
  /** Range of the value expression. */
  valueRange: Range;
  source: ConfigSource;
  /** Source text of the value expression. */
  text: string;
  /** A Python float is in it (a whole one too: the runtime refuses it where an int is due). */
  float?: boolean;
}

/** A decorator argument that could not be evaluated (call, name bound to a non-literal, ...). */
export interface DynamicValue {
  argRange: Range;
  valueRange: Range;
  text: string;
}

export type ParamKind = 'positional' | 'keyword-only' | 'var-positional' | 'var-keyword';

/**
 * A type hint as the source writes it, read from the syntax tree (no evaluation): what the typed clients and the
 * OpenAPI document map to JSON types (engine/src/clientgen/types.ts).
 */
export type TypeExpr =
  /** `int`, `typing.List`, `np.ndarray` (dotted names stay whole). */
  | { kind: 'name'; name: string }
  /** `list[int]`, `Dict[str, Point]`, `typing.Optional[str]`. */
  | { kind: 'generic'; name: string; args: TypeExpr[] }
  /** `A | B | None`. */
  | { kind: 'union'; options: TypeExpr[] }
  /** A string: a forward reference (`"Point"`), or a member of `Literal[...]`. */
  | { kind: 'string'; value: string }
  /** `None`, and the numbers and booleans of `Literal[...]`. */
  | { kind: 'value'; value: number | boolean | null }
  /** `...` in `tuple[int, ...]`. */
  | { kind: 'ellipsis' }
  /** `[int, str]`, the parameter list of `Callable[[int, str], bool]`. */
  | { kind: 'list'; items: TypeExpr[] }
  /** Anything else, as written. */
  | { kind: 'other'; text: string };

export interface ParamInfo {
  name: string;
  kind: ParamKind;
  annotation?: string;
  /** The annotation read as a type, when there is one. */
  type?: TypeExpr;
  /** Source text of the default value, when there is one. */
  default?: string;
  /** A parameter before `/`: Python refuses it given by name, so no JSON input can carry it. */
  positionalOnly?: boolean;
}

export interface FunctionInfo {
  name: string;
  isAsync: boolean;
  isClass: boolean;
  /** True when the body contains `yield` (a streaming handler). */
  isGenerator: boolean;
  params: ParamInfo[];
  /** The return annotation (`-> dict`), as written and as a type. */
  returnAnnotation?: string;
  returns?: TypeExpr;
  /** For a class: its public methods (name not starting with `_`). */
  methods?: FunctionInfo[];
  docstring?: string;
  /** First line of the docstring, trimmed. */
  summary?: string;
  /** The whole definition including decorators. */
  range: Range;
  nameRange: Range;
  /** `from m import a, b` statements inside the body: how an endpoint calls another endpoint's function. */
  bodyImports: Array<{ module: string; names: string[] }>;
  /** The names the body reads: a call of another endpoint's function defined in the same file or imported at its top. */
  bodyNames: string[];
}

export type { HttpMethod } from '../protocol/endpointKind';

export interface RouteInfo {
  method: HttpMethod;
  path: string;
  /** Range of the path string literal. */
  pathRange: Range;
  /** Range of the whole decorator. */
  range: Range;
  function: FunctionInfo;
}

export type { EndpointKind } from '../protocol/endpointKind';

/** Configuration after defaults; what the manifest and the platform use. */
export interface EndpointConfig {
  gpu?: string[];
  cpu?: string;
  workersMin: number;
  workersMax: number;
  dependencies: string[];
  executionTimeoutMs?: number;
  idleTimeout: number;
  env: Record<string, string>;
  gpuCount: number;
  maxConcurrency: number;
  /** Where the workers may run after the placement rules (volumes, CPU datacenters); absent means anywhere. */
  datacenters?: string[];
  volumes: VolumeSpec[];
  /** As declared; the scheduler's default depends on the endpoint kind (defaultScalerType). */
  scalerType?: string;
  scalerValue: number;
  minCudaVersion: string;
  systemDependencies: string[];
  image?: string;
  template?: PodTemplateSpec;
  flashboot: boolean;
  accelerateDownloads: boolean;
}

export interface EndpointSpec {
  name: string;
  kind: EndpointKind;
  /** Project-relative POSIX path of the file that declares it. */
  file: string;
  /** Dotted module name of that file (`workers/gpu_infer.py` -> `workers.gpu_infer`). */
  module: string;
  /** Range of the `name=` value (or the decorator / assignment when the name is implicit). */
  nameRange: Range;
  /** The `Endpoint(...)` call. */
  callRange: Range;
  /** For load-balanced endpoints: the module-level variable (`api` in `api = Endpoint(...)`). */
  variable?: string;
  /** Every keyword argument that could be evaluated, by parameter name. */
  args: Record<string, ConfigValue>;
  /** Keyword arguments that could not be evaluated statically, by parameter name. */
  dynamicArgs: Record<string, DynamicValue>;
  config: EndpointConfig;
  /** Queue-based: the decorated function(s) or class. Load-balanced: the route functions. */
  functions: FunctionInfo[];
  routes: RouteInfo[];
}

export interface ImportInfo {
  /** `import a.b as c` -> module `a.b`; `from a.b import c` -> module `a.b`. Relative imports keep their dots. */
  module: string;
  /** Names bound by the statement (`c`, or `a` for `import a.b`). */
  names: string[];
  /** `from m import a as c`: what each bound name is in `m` (`c` -> `a`); absent for `import m`. */
  imported?: Record<string, string>;
  /** The first segment of the module: what a package install provides. Empty for relative imports. */
  topLevel: string;
  range: Range;
  /** The statement's source text. */
  text: string;
}

/** A field of a TypedDict, a dataclass or a pydantic model. */
export interface TypeField {
  name: string;
  annotation?: string;
  type?: TypeExpr;
  /** TypedDict: the key may be absent (`total=False`, `NotRequired[...]`); dataclass and BaseModel: always false. */
  optional: boolean;
  /**
   * Source text of the default value (a dataclass field's `= ...`). A BaseModel field's `Field(...)`: its `default=`
   * (or first argument), the whole call for a `default_factory=`, none for `Field(...)` (required).
   */
  default?: string;
  /** A BaseModel field's `Field(alias="...")`: its key in the JSON the model reads and answers. */
  alias?: string;
  /** `Field(validation_alias="...")`: its key in the JSON the model reads (over `alias`). */
  validationAlias?: string;
  /** `Field(serialization_alias="...")`: its key in the JSON the model answers (over `alias`). */
  serializationAlias?: string;
  /** `Field(exclude=True)`: read, never answered. */
  excluded?: boolean;
  /** 0-based line of the field. */
  line: number;
}

/** A module-level `class X(TypedDict)`, `@dataclass class X` or `class X(BaseModel)` (pydantic): a named JSON object shape. */
export interface TypeDeclaration {
  name: string;
  kind: 'TypedDict' | 'dataclass' | 'BaseModel';
  /** The other classes it extends, as written (a TypedDict extending another TypedDict). */
  bases: string[];
  fields: TypeField[];
  docstring?: string;
  nameRange: Range;
  /** A pydantic model's `alias_generator` (model_config or class Config), as written: `to_camel`. */
  aliasGenerator?: string;
}

export interface FileModel {
  file: string;
  module: string;
  endpoints: EndpointSpec[];
  /** TypedDicts, dataclasses and pydantic models declared at module level (whether or not the file uses strato). */
  types: TypeDeclaration[];
  /** Module-level imports. */
  imports: ImportInfo[];
  /** Diagnostics that need only this file. */
  diagnostics: Diagnostic[];
  /** True when the file mentions `Endpoint` from strato at all (cheap filter for the index). */
  usesStrato: boolean;
  /** The local names the file's imports bind to strato (hover and completion speak up only there). */
  strato: StratoBindings;
}

export interface StratoBindings {
  /** Local names of `Endpoint` (`Endpoint`, or `E` after `from strato import Endpoint as E`). */
  endpoint: string[];
  /** Local alias -> catalog enum class (`G` -> `GpuGroup`). */
  enums: Record<string, string>;
  /** Local names bound to the module (`strato`, `s` after `import strato as s`). */
  modules: string[];
  /** Local alias -> value class (`NetworkVolume`, `PodTemplate`). */
  classes?: Record<string, string>;
}

export function emptyBindings(): StratoBindings {
  return { endpoint: [], enums: {}, modules: [] };
}

export interface ProjectModel {
  root: string;
  files: FileModel[];
  endpoints: EndpointSpec[];
  /** File diagnostics plus cross-file ones (duplicate endpoint names). */
  diagnostics: Diagnostic[];
}
