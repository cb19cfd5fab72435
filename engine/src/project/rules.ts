// Validation of one endpoint's configuration (the decorator's arguments), with the stable codes and
// messages that the build and the language server both show. Also turns the arguments into EndpointConfig.
import { cpuShapes, didYouMean, enumClasses, findCpu, findGpu, findGpusByName, gpuGroups, gpuTypes, parameters } from '../catalog';
import {
  checkBool,
  checkCudaVersion,
  checkDatacenters,
  checkImage,
  checkIntParameter,
  checkScalerType,
  checkSystemDependencies,
  checkTemplate,
  checkVolumes,
  checkWorkers as checkWorkersRule,
  ENDPOINT_NAME,
  parameterDefaults,
  parameterMessage,
  resolvePlacement,
  type Checked,
} from '../catalog/parameterRules';
import type { ConfigValue, Diagnostic, DynamicValue, EndpointConfig, FixData, Range, RuleCode, Severity } from './model';

export { ENDPOINT_NAME } from '../catalog/parameterRules';

/** A valid endpoint name close to `raw` (what a rename fix writes), room left for a `-N` suffix; undefined where none is. */
export function validEndpointName(raw: string, room = 0): string | undefined {
  const cleaned = raw
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-_]+/, '')
    .slice(0, 63 - room)
    .replace(/[-_]+$/, '');
  return cleaned && ENDPOINT_NAME.test(cleaned) ? cleaned : undefined;
}
const REQUIREMENT =
  /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:\s*\[\s*[A-Za-z0-9._-]+(?:\s*,\s*[A-Za-z0-9._-]+)*\s*\])?\s*(?:(?:(?:===|==|!=|~=|>=|<=|<|>)\s*[A-Za-z0-9.*+!_-]+)(?:\s*,\s*(?:===|==|!=|~=|>=|<=|<|>)\s*[A-Za-z0-9.*+!_-]+)*|@\s*\S+)?\s*(?:;.*)?$/;
/** A requirement pip installs from a URL: `git+https://github.com/org/repo@v1#egg=name`, `https://host/pkg.whl`. */
const URL_REQUIREMENT = /^(?:[a-z]+\+)?[a-z][a-z0-9+.-]*:\/\/\S+$/i;

export interface EndpointArgs {
  args: Record<string, ConfigValue>;
  dynamicArgs: Record<string, DynamicValue>;
  /** Enum members that do not exist (`GpuGroup.ADA_2`), by parameter name. */
  /** `written`: the member as the file spells it (`G.ADA_2`, `strato.GpuGroup.ADA_2`): fixes keep its prefix. */
  unknownEnums: Array<{ param: string; range: Range; enumClass: string; member: string; written: string }>;
  /** Keyword names that are not parameters of Endpoint. */
  unknownParams: Array<{ name: string; range: Range }>;
}

export class DiagnosticSink {
  readonly items: Diagnostic[] = [];
  constructor(readonly file: string) {}
  add(code: RuleCode, message: string, range: Range, extra: { severity?: Severity; fix?: FixData; related?: Diagnostic['related'] } = {}): void {
    this.items.push({ code, severity: extra.severity ?? 'error', message, file: this.file, range, fix: extra.fix, related: extra.related });
  }
}

/** The rule code of an unknown member of each catalog enum. */
const ENUM_CODES: Record<string, RuleCode> = {
  GpuGroup: 'unknown-gpu',
  GpuType: 'unknown-gpu',
  CpuInstanceType: 'unknown-cpu',
  DataCenter: 'unknown-datacenter',
};

const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

export function validateEndpointArgs(a: EndpointArgs, sink: DiagnosticSink): EndpointConfig {
  const d = parameterDefaults;
  const config: EndpointConfig = {
    workersMin: d.workers[0],
    workersMax: d.workers[1],
    dependencies: [],
    idleTimeout: d.idleTimeout,
    env: {},
    gpuCount: d.gpuCount,
    maxConcurrency: d.maxConcurrency,
    volumes: [],
    scalerValue: d.scalerValue,
    minCudaVersion: d.minCudaVersion,
    systemDependencies: [],
    flashboot: d.flashboot,
    accelerateDownloads: d.accelerateDownloads,
  };

  for (const u of a.unknownParams) {
    const known = parameters.map((p) => p.name);
    const guess = didYouMean(u.name, known);
    sink.add(
      'unknown-parameter',
      `'${u.name}' is not a parameter of Endpoint${guess ? `: did you mean '${guess}'?` : `; use one of ${known.join(', ')}.`}`,
      u.range,
    );
  }
  for (const [param, d] of Object.entries(a.dynamicArgs)) {
    sink.add(
      'not-literal',
      `${param} must be a literal value (a string, number, list, dict, a catalog member such as GpuGroup.ADA_24, or a module-level constant bound to ` +
        `one), because the build reads it without running your code.`,
      d.valueRange,
    );
  }
  for (const u of a.unknownEnums) {
    const guess = didYouMean(u.member, Object.keys(enumClasses[u.enumClass]));
    const code: RuleCode = ENUM_CODES[u.enumClass] ?? 'invalid-type';
    const suggestion = guess && `${u.written.slice(0, u.written.lastIndexOf('.') + 1)}${guess}`;
    const what = u.written === `${u.enumClass}.${u.member}` ? u.written : `${u.written} (${u.enumClass}.${u.member})`;
    sink.add(code, `${what} does not exist${suggestion ? `: did you mean ${suggestion}?` : '.'}`, u.range, {
      fix: suggestion ? { kind: 'replace-value', range: u.range, replacement: suggestion } : undefined,
    });
  }

  const gpu = a.args.gpu;
  const cpu = a.args.cpu;
  const hasGpu = gpu !== undefined && gpu.value !== null;
  const hasCpu = cpu !== undefined && cpu.value !== null;
  if (hasGpu && hasCpu) {
    // One mistake, one problem: on gpu=, pointing at cpu= as related information.
    sink.add('gpu-and-cpu', parameterMessage('gpu-and-cpu'), gpu.argRange, {
      fix: { kind: 'keep-gpu-or-cpu', gpuArg: gpu.argRange, cpuArg: cpu.argRange },
      related: [{ file: sink.file, range: cpu.argRange, message: 'cpu is also given here' }],
    });
  }
  if (hasGpu) config.gpu = checkGpu(gpu, sink);
  if (hasCpu) config.cpu = checkCpu(cpu, sink);
  if (!hasGpu && !hasCpu && !a.dynamicArgs.gpu && !a.dynamicArgs.cpu && !a.unknownEnums.length) config.gpu = ['any'];

  const workers = a.args.workers;
  if (workers && workers.value !== null) checkWorkers(workers, config, sink);

  const deps = a.args.dependencies;
  if (deps && deps.value !== null) {
    if (!isStringList(deps.value)) {
      sink.add('invalid-dependencies', 'dependencies must be a list of requirement strings, e.g. ["requests>=2.31", "pillow"].', deps.valueRange);
    } else {
      const bad = deps.value.filter((r) => !REQUIREMENT.test(r.trim()) && !URL_REQUIREMENT.test(r.trim()));
      if (bad.length)
        sink.add(
          'invalid-dependencies',
          `${bad.map((b) => JSON.stringify(b)).join(', ')} ${bad.length === 1 ? 'is not a valid requirement' : 'are not valid requirements'}: use a ` +
            `package name with an optional version, e.g. "requests>=2.31".`,
          deps.valueRange,
        );
      else config.dependencies = deps.value.map((r) => r.trim());
    }
  }

  config.idleTimeout = checkInt(a.args.idle_timeout, 'idle_timeout', sink) ?? d.idleTimeout;
  config.gpuCount = checkInt(a.args.gpu_count, 'gpu_count', sink) ?? d.gpuCount;
  config.maxConcurrency = checkInt(a.args.max_concurrency, 'max_concurrency', sink) ?? d.maxConcurrency;
  // 0, the reference's default, means no limit of its own: the platform's default applies.
  config.executionTimeoutMs = checkInt(a.args.execution_timeout_ms, 'execution_timeout_ms', sink) || undefined;
  config.scalerValue = checkInt(a.args.scaler_value, 'scaler_value', sink) ?? d.scalerValue;
  config.flashboot = checked(a.args.flashboot, sink, (v, t) => checkBool('flashboot', v, t)) ?? d.flashboot;
  config.accelerateDownloads = checked(a.args.accelerate_downloads, sink, (v, t) => checkBool('accelerate_downloads', v, t)) ?? d.accelerateDownloads;
  config.minCudaVersion = checked(a.args.min_cuda_version, sink, checkCudaVersion) ?? d.minCudaVersion;
  config.systemDependencies = checked(a.args.system_dependencies, sink, checkSystemDependencies) ?? [];
  setDefined(config, 'scalerType', checked(a.args.scaler_type, sink, checkScalerType));
  setDefined(config, 'image', checked(a.args.image, sink, checkImage));
  setDefined(config, 'template', checked(a.args.template, sink, checkTemplate));
  const declaredDcs = checked(a.args.datacenter, sink, checkDatacenters);
  const volumes = checked(a.args.volume, sink, checkVolumes);
  config.volumes = volumes ?? [];
  if (!a.args.datacenter || declaredDcs) {
    const placement = resolvePlacement({ cpu: hasCpu, datacenters: declaredDcs, volumes: config.volumes });
    setDefined(config, 'datacenters', placement.datacenters);
    for (const p of placement.problems) {
      const arg = p.param === 'datacenter' && a.args.datacenter ? a.args.datacenter : p.param === 'volume' && a.args.volume ? a.args.volume : cpu;
      if (!arg) continue;
      const fix: FixData | undefined =
        p.suggestion && p.param === 'datacenter' && arg.source !== 'constant'
          ? { kind: 'replace-value', range: arg.valueRange, replacement: JSON.stringify(p.suggestion) }
          : undefined;
      sink.add(p.code, p.message, p.param === 'datacenter' ? arg.valueRange : arg.argRange, { fix });
    }
  }

  const env = a.args.env;
  if (env && env.value !== null) {
    const checkedEnv = checkEnv(env.value, 'env', env.valueRange, sink);
    if (checkedEnv) config.env = checkedEnv;
  }
  // A Pod template's env sits under the endpoint's own, checked as it is.
  if (config.template?.env && a.args.template) {
    const templateEnv = checkEnv(config.template.env, 'PodTemplate env', a.args.template.valueRange, sink);
    if (templateEnv) config.env = { ...templateEnv, ...config.env };
  }
  return config;
}

/** An env dict's names and values (`what` names it in the messages): the dict, or undefined after reporting. */
function checkEnv(v: unknown, what: string, range: Range, sink: DiagnosticSink): Record<string, string> | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    sink.add('invalid-env', `${what} must be a dict of strings, e.g. {"MODEL": "small"}.`, range);
    return undefined;
  }
  const entries = Object.entries(v as Record<string, unknown>);
  const badKey = entries.find(([k]) => k.startsWith('\u0000') || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(k));
  const badValue = entries.find(([, val]) => typeof val !== 'string');
  if (badKey)
    sink.add(
      'invalid-env',
      `${what} key ${badKey[0].replace('\u0000', '')} is not a valid environment variable name: use letters, digits and '_' (not starting with a digit).`,
      range,
    );
  else if (badValue)
    sink.add(
      'invalid-env',
      badValue[1] === null
        ? `${what} value of ${badValue[0]} is None, which no environment variable holds: give a string (or "" for empty), or leave the key out.`
        : `${what} value of ${badValue[0]} must be a string: write it in quotes, e.g. "${badValue[1] === true ? 'True' : badValue[1] === false ? 'False' : String(badValue[1])}".`,
      range,
    );
  else return v as Record<string, string>;
  return undefined;
}

/** Optional fields stay absent (not `undefined`) when not given, so that the config reads as what was declared. */
function setDefined<K extends keyof EndpointConfig>(config: EndpointConfig, key: K, value: EndpointConfig[K] | undefined): void {
  if (value !== undefined) config[key] = value;
}

/** Runs a catalog rule on a given argument; reports its message on the value and returns the checked value. */
function checked<T>(v: ConfigValue | undefined, sink: DiagnosticSink, rule: (value: unknown, shown: string) => Checked<T>): T | undefined {
  if (!v || v.value === null) return undefined;
  const r = rule(v.value, v.text);
  if (r.ok) return r.value;
  sink.add(r.code, r.message, v.valueRange);
  return undefined;
}

function checkGpu(gpu: ConfigValue, sink: DiagnosticSink): string[] | undefined {
  const values = typeof gpu.value === 'string' ? [gpu.value] : gpu.value;
  if (!isStringList(values) || values.length === 0) {
    sink.add('invalid-type', 'gpu must be a GPU group or model (e.g. GpuGroup.ADA_24, "NVIDIA H200") or a non-empty list of them.', gpu.valueRange);
    return undefined;
  }
  const all = [...gpuGroups.map((g) => g.id), ...gpuTypes.map((t) => t.id)];
  const canonical: string[] = [];
  for (const value of values) {
    const found = findGpu(value);
    if (found) {
      canonical.push((found.type ?? found.group)!.id);
      continue;
    }
    // A short model name as other tools write it ("H100", "RTX 4090") means the catalog's models of that name.
    const meant = findGpusByName(value).map((t) => t.id);
    const guess = meant.length === 1 ? meant[0] : meant.length === 0 ? didYouMean(value, all) : undefined;
    const fix: FixData | undefined =
      guess && typeof gpu.value === 'string' && gpu.source === 'literal'
        ? { kind: 'replace-value', range: gpu.valueRange, replacement: JSON.stringify(guess) }
        : undefined;
    const groups = [...new Set(meant.map((id) => gpuTypes.find((t) => t.id === id)!.group))];
    const quoted = JSON.stringify(value);
    sink.add(
      'unknown-gpu',
      guess
        ? parameterMessage('unknown-gpu-guess', { value: quoted, guess: JSON.stringify(guess) })
        : meant.length > 1
          ? parameterMessage(groups.length === 1 ? 'unknown-gpu-group' : 'unknown-gpu-models', {
              value: quoted,
              models: meant.map((m) => JSON.stringify(m)).join(', '),
              group: groups[0],
            })
          : parameterMessage('unknown-gpu', { value: quoted, groups: gpuGroups.map((g) => g.id).join(', ') }),
      gpu.valueRange,
      { fix },
    );
  }
  return canonical.length === values.length ? canonical : undefined;
}

function checkCpu(cpu: ConfigValue, sink: DiagnosticSink): string | undefined {
  if (typeof cpu.value !== 'string') {
    sink.add('invalid-type', 'cpu must be a CPU instance shape such as CpuInstanceType.CPU3C_2_4 or "cpu3c-2-4".', cpu.valueRange);
    return undefined;
  }
  const shape = findCpu(cpu.value);
  if (shape) return shape.id;
  const guess = didYouMean(
    cpu.value,
    cpuShapes.map((c) => c.id),
  );
  const fix: FixData | undefined =
    guess && cpu.source === 'literal' ? { kind: 'replace-value', range: cpu.valueRange, replacement: JSON.stringify(guess) } : undefined;
  sink.add(
    'unknown-cpu',
    `unknown CPU shape "${cpu.value}"${guess ? `: did you mean "${guess}"?` : `; shapes are family-vCPUs-GiB: ${cpuShapes.map((c) => c.id).join(', ')}.`}`,
    cpu.valueRange,
    { fix },
  );
  return undefined;
}

function checkWorkers(w: ConfigValue, config: EndpointConfig, sink: DiagnosticSink): void {
  const r = checkWorkersRule(w.float ? Number.NaN : w.value, w.text); // a float is no int, whole or not
  if (r.ok) {
    config.workersMin = r.value.min;
    config.workersMax = r.value.max;
    return;
  }
  const fix: FixData | undefined =
    r.swapped && Array.isArray(w.value) && w.source === 'literal'
      ? { kind: 'swap-workers', range: w.valueRange, replacement: `(${r.swapped.join(', ')})` }
      : undefined;
  sink.add(r.code, r.message, w.valueRange, { fix });
}

function checkInt(v: ConfigValue | undefined, param: string, sink: DiagnosticSink): number | undefined {
  if (!v || v.value === null) return undefined;
  const r = checkIntParameter(param, v.float ? Number.NaN : v.value, v.text); // a float is no int, whole or not
  if (r.ok) return r.value;
  sink.add(r.code, r.message, v.valueRange);
  return undefined;
}

export function isKnownParameter(name: string): boolean {
  return parameters.some((p) => p.name === name);
}
