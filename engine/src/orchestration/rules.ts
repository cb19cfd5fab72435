// The rule table for the orchestration tool's YAML files: every key each file kind accepts, its type, its
// documentation (hover, completion, JSON schema) and its value checks, with the codes and messages users see.
import { datacenters, didYouMean, findDatacenter, findGpusByName, gpuNames, type GpuType } from '../catalog';
import type { RuleCode } from '../project/model';

export type YamlType = 'string' | 'integer' | 'number' | 'string-or-integer' | 'scalar' | 'list' | 'map' | 'map-or-list' | 'any';

/** A failed value check: the code and the one-sentence message. */
export interface Problem {
  code: RuleCode;
  message: string;
}
/** `plain`: the value was written without quotes (the tool's YAML 1.1 reader reads some such values otherwise). */
export type ValueCheck = (value: unknown, how?: { plain: boolean }) => Problem | undefined;

export interface KeySpec {
  doc: string;
  type: YamlType;
  required?: boolean;
  /** The only values allowed (completion offers them). */
  values?: readonly string[];
  check?: ValueCheck;
  /** For maps: their keys; for lists: the spec of each item. */
  keys?: Record<string, KeySpec>;
  item?: KeySpec;
  /** A map whose keys are free (env names): each value's spec. */
  anyKey?: KeySpec;
  /** Don't check keys inside (another backend type's settings are the tool's business). */
  open?: boolean;
}

/** The tool's backend types; `strato` is this service. Other backends are accepted as they are. */
export const BACKEND_TYPES = [
  'strato',
  'aws',
  'azure',
  'gcp',
  'lambda',
  'runpod',
  'vastai',
  'kubernetes',
  'oci',
  'tensordock',
  'cudo',
  'datacrunch',
  'vultr',
  'nebius',
  'ssh',
] as const;
export const SPOT_POLICIES = ['spot', 'on-demand', 'auto'] as const;
export const CONFIG_TYPES = ['task', 'volume', 'service', 'dev-environment', 'fleet', 'gateway'] as const;
/** A reference to an environment variable, which the tool substitutes when it reads its server configuration. */
export const ENV_REFERENCE = /^\$\{\{\s*env\.[A-Za-z_][A-Za-z0-9_]*\s*\}\}$/;
export const DEFAULT_KEY_VARIABLE = 'STRATO_API_KEY';

const SIZE = /^\d+(\.\d+)?\s*(MB|GB|TB)$/i;
const SIZE_RANGE = /^(\d+(\.\d+)?\s*(MB|GB|TB))?\.\.(\d+(\.\d+)?\s*(MB|GB|TB))?$/i;
const COUNT_RANGE = /^(\d+)?\.\.(\d+)?$/;
const toGb = (s: string): number => {
  const m = /^(\d+(?:\.\d+)?)\s*(MB|GB|TB)$/i.exec(s.trim());
  if (!m) return NaN;
  const unit = m[2].toUpperCase();
  return Number(m[1]) * (unit === 'TB' ? 1024 : unit === 'MB' ? 1 / 1024 : 1);
};

export function checkSize(what: string, example: string): ValueCheck {
  return (v) => {
    const s = String(v).trim();
    if (SIZE.test(s) && toGb(s) > 0) return undefined;
    return { code: 'invalid-size', message: `${what} "${s}" is not a size: write a number with MB, GB or TB, e.g. ${example}.` };
  };
}

/** `4`, `2..8`, `2..`, `..8`: an integer or a range whose low end does not exceed its high end. */
export function checkCountRange(what: string, example: string): ValueCheck {
  return (v) => {
    const s = String(v).trim();
    if (/^\d+$/.test(s) && Number(s) > 0) return undefined;
    const m = COUNT_RANGE.exec(s);
    if (m && (m[1] || m[2]) && !(m[1] && m[2] && Number(m[1]) > Number(m[2]))) return undefined;
    if (m && m[1] && m[2]) return { code: 'invalid-range', message: `${what} range "${s}" has its low end above its high end: did you mean ${m[2]}..${m[1]}?` };
    return { code: 'invalid-range', message: `${what} "${s}" is not a count or a range: write an integer or min..max, e.g. ${example}.` };
  };
}

function checkSizeOrRange(what: string, example: string): ValueCheck {
  return (v) => {
    const s = String(v).trim();
    if (SIZE.test(s)) return undefined;
    const m = SIZE_RANGE.exec(s);
    if (m && (m[1] || m[4]) && !(m[1] && m[4] && toGb(m[1]) > toGb(m[4]))) return undefined;
    return { code: m ? 'invalid-range' : 'invalid-size', message: `${what} "${s}" is not a size or a size range: write e.g. ${example}.` };
  };
}

/** `gpu: 24GB`, `gpu: H100:2`, `gpu: A100:80GB:2`, `gpu: H100,H200:1..2`: names from the catalog, memory, count. */
export const checkGpuSpec: ValueCheck = (v) => {
  const s = String(v).trim();
  if (!s) return { code: 'invalid-value', message: 'gpu is empty: write a GPU name, a memory or a count, e.g. H100:80GB:1 or 24GB.' };
  const named: GpuType[] = [];
  let memory: string | undefined;
  let count: string | undefined;
  const stray = { code: 'invalid-value' as const, message: `gpu "${s}" has an empty part (a stray ':' or ','): write e.g. H100:80GB:1 or H100,A100:2.` };
  for (const part of s.split(':')) {
    const p = part.trim();
    if (!p) return stray;
    if (/^[\d.]+\s*(MB|GB|TB)?(\.\.[\d.]*\s*(MB|GB|TB)?)?$/i.test(p) || /^\.\.[\d.]+\s*(MB|GB|TB)$/i.test(p)) {
      const isMemory = /(MB|GB|TB)/i.test(p);
      const problem = isMemory ? checkSizeOrRange('gpu memory', '24GB or 24GB..80GB')(p) : checkCountRange('gpu count', '1 or 1..2')(p);
      if (problem) return problem;
      const given = isMemory ? memory : count;
      if (given !== undefined)
        return { code: 'invalid-value', message: `gpu "${s}" gives two ${isMemory ? 'memories' : 'counts'} (${given} and ${p}): keep one.` };
      if (isMemory) memory = p;
      else count = p;
      continue;
    }
    for (const name of p.split(',')) {
      if (!name.trim()) return stray;
      const types = findGpusByName(name);
      if (types.length === 0) return unknownGpu(name.trim());
      named.push(...types);
    }
  }
  // A name and a memory that no catalog model of that name has can never be scheduled.
  if (memory && named.length) {
    const [lo, hi] = memory.includes('..') ? memory.split('..').map((x) => (x ? toGb(x) : NaN)) : [toGb(memory), toGb(memory)];
    const fits = named.some((t) => !(t.memoryGb < lo) && !(t.memoryGb > hi));
    if (!fits) {
      const have = [...new Set(named.map((t) => t.memoryGb))]
        .sort((a, b) => a - b)
        .map((m) => `${m}GB`)
        .join(', ');
      return { code: 'invalid-value', message: `no GPU of that name has ${memory} of memory in the catalog (it has ${have}): fix the memory or the name.` };
    }
  }
  return undefined;
};

export function unknownGpu(name: string): Problem {
  const guess = didYouMean(name, gpuNames());
  return {
    code: 'unknown-gpu',
    message: `unknown GPU "${name}"${guess ? `: did you mean "${guess}"?` : `; use a catalog name such as ${gpuNames().slice(0, 6).join(', ')}.`}`,
  };
}

export const checkDatacenter: ValueCheck = (v) => {
  const s = String(v);
  if (findDatacenter(s)) return undefined;
  const guess = didYouMean(
    s,
    datacenters.map((d) => d.id),
  );
  return {
    code: 'unknown-region',
    message: `unknown region "${s}"${guess ? `: did you mean "${guess}"?` : `; use a datacenter: ${datacenters.map((d) => d.id).join(', ')}.`}`,
  };
};

/** Unquoted, YAML reads 3.10 as the number 3.1: the version must be a string. */
const checkPython: ValueCheck = (v) => {
  if (typeof v === 'string' && /^3\.\d{1,2}$/.test(v)) return undefined;
  const hint = typeof v === 'number' ? ` (YAML reads it as the number ${v})` : '';
  return { code: 'invalid-value', message: `python ${String(v)} is not an interpreter version${hint}: write major.minor in quotes, e.g. "3.11".` };
};

const str = (doc: string, extra: Partial<KeySpec> = {}): KeySpec => ({ doc, type: 'string', ...extra });
const stringList = (doc: string, item: Partial<KeySpec> = {}): KeySpec => ({ doc, type: 'list', item: { doc, type: 'string', ...item } });

/** The `name` of a gpu mapping: catalog names, one or several (a list, or separated by commas). */
const checkGpuName: ValueCheck = (v) => {
  if (typeof v !== 'string') return { code: 'invalid-type', message: `gpu name ${String(v)} is not a GPU name: write one from the catalog, e.g. H100.` };
  for (const name of v.split(',')) if (findGpusByName(name).length === 0) return unknownGpu(name.trim());
  return undefined;
};

const gpuMap: Record<string, KeySpec> = {
  name: {
    doc: 'GPU name(s) from the catalog.',
    type: 'any',
    check: checkGpuName,
    item: { doc: 'A GPU name from the catalog.', type: 'string', check: checkGpuName },
  },
  memory: str('GPU memory, e.g. 24GB or 24GB..80GB.', { check: checkSizeOrRange('gpu memory', '24GB or 24GB..80GB') }),
  count: { doc: 'Number of GPUs, e.g. 1 or 1..2.', type: 'string-or-integer', check: checkCountRange('gpu count', '1 or 1..2') },
};

export const RESOURCES: Record<string, KeySpec> = {
  gpu: { doc: 'GPU: a name from the catalog, memory (24GB) and count, e.g. H100:80GB:1, 24GB or A100:2.', type: 'any', check: checkGpuSpec, keys: gpuMap },
  cpu: { doc: 'Number of vCPUs or a range, e.g. 4 or 2..8.', type: 'string-or-integer', check: checkCountRange('cpu', '4 or 2..8') },
  memory: str('RAM, e.g. 16GB or 16GB..64GB.', { check: checkSizeOrRange('memory', '16GB or 16GB..64GB') }),
  disk: str('Disk size, e.g. 100GB.', { check: checkSizeOrRange('disk', '100GB or 100GB..') }),
  shm_size: str('Shared memory size, e.g. 8GB.', { check: checkSize('shm_size', '8GB') }),
};

/**
 * A port or local:remote, each 1 to 65535. Unquoted, YAML 1.1 (the tool's reader) takes `8080:30` for a number in
 * base 60 (484830): a pair whose second part is below 60 must be quoted.
 */
const checkPort: ValueCheck = (v, how) => {
  const m = /^(\d{1,5})(?::(\d{1,5}))?$/.exec(String(v));
  if (!m) return { code: 'invalid-value', message: `port "${String(v)}" is not a port: write a number or local:remote, e.g. 8000 or "8080:80".` };
  const out = [m[1], m[2]].find((p) => p !== undefined && (Number(p) < 1 || Number(p) > 65535));
  if (out) return { code: 'invalid-value', message: `port ${out} is out of range: a port is 1 to 65535.` };
  if (how?.plain && /^[1-9]\d*:[0-5]?\d$/.test(String(v))) {
    const read = Number(m[1]) * 60 + Number(m[2]);
    return {
      code: 'invalid-value',
      message: `unquoted, ${String(v)} is read by the tool as the number ${read} (YAML 1.1 reads it in base 60): write it in quotes, "${String(v)}".`,
    };
  }
  return undefined;
};

export const TASK: Record<string, KeySpec> = {
  type: str('Configuration type.', { required: true, values: CONFIG_TYPES }),
  name: str('Name of the task (the run name).'),
  python: str('Python interpreter version, e.g. "3.11".', { check: checkPython }),
  image: str('Docker image to run instead of the default one.'),
  env: {
    doc: 'Environment variables: a map NAME: value, or a list of NAME=value.',
    type: 'map-or-list',
    anyKey: { doc: "The variable's value.", type: 'scalar' },
    item: { doc: 'NAME=value, or NAME to pass on the variable where the tool runs.', type: 'string' },
  },
  commands: stringList('Shell commands the task runs, in order.'),
  ports: {
    doc: 'Ports to forward, e.g. 8000 or "8080:80".',
    type: 'list',
    item: {
      doc: 'A port or local:remote.',
      type: 'string-or-integer',
      check: checkPort,
    },
  },
  spot_policy: str('Whether to use spot instances: spot, on-demand or auto.', { values: SPOT_POLICIES }),
  resources: { doc: 'Resources the task needs: gpu, cpu, memory, disk.', type: 'map', keys: RESOURCES },
  volumes: {
    doc: 'Volumes to mount, as name:/path.',
    type: 'list',
    item: { doc: 'A volume mount name:/path.', type: 'any', keys: { name: str('Volume name.'), path: str('Mount path.') } },
  },
  regions: stringList('Regions the task may run in.'),
  backends: stringList('Backends the task may run on.', { values: BACKEND_TYPES }),
  working_dir: str('Working directory of the commands.'),
  max_price: { doc: 'Maximum price per hour, in dollars.', type: 'number' },
  max_duration: { doc: 'Maximum run time, e.g. 2h, or off.', type: 'string-or-integer' },
  nodes: { doc: 'Number of nodes.', type: 'integer' },
  retry: { doc: 'Retry policy.', type: 'any' },
};

export const VOLUME: Record<string, KeySpec> = {
  type: str('Configuration type.', { required: true, values: CONFIG_TYPES }),
  name: str('Name of the volume; tasks mount it by this name.', { required: true }),
  backend: str('Backend the volume lives on.', { required: true, values: BACKEND_TYPES }),
  region: str('Region (datacenter) of the volume; it fixes the region of every Pod that mounts it.', { required: true }),
  size: str('Size of a new volume, e.g. 100GB.', { check: checkSize('size', '100GB') }),
  volume_id: str('Id of an existing volume to register instead of creating one.'),
};

const CREDS: Record<string, KeySpec> = {
  type: str('Credentials type: api_key.', { required: true, values: ['api_key'] }),
  api_key: str(`The service's API key; write an environment reference such as \${{ env.${DEFAULT_KEY_VARIABLE} }}.`, { required: true }),
};

export const STRATO_BACKEND: Record<string, KeySpec> = {
  type: str('Backend type.', { required: true, values: BACKEND_TYPES }),
  creds: { doc: 'Credentials of the strato backend.', type: 'map', required: true, keys: CREDS },
  regions: stringList('Datacenters the backend may use.', { check: checkDatacenter }),
};

export const SERVER: Record<string, KeySpec> = {
  projects: {
    doc: 'Projects of the server, each with its backends.',
    type: 'list',
    item: {
      doc: 'A project.',
      type: 'map',
      keys: {
        name: str('Project name.', { required: true }),
        backends: {
          doc: 'Backends of the project.',
          type: 'list',
          item: { doc: 'A backend: type and its settings.', type: 'map', open: true, keys: STRATO_BACKEND },
        },
        default: { doc: 'Whether this is the default project.', type: 'any' },
      },
    },
  },
  encryption: { doc: 'Encryption keys of the server.', type: 'any' },
  default_permissions: { doc: 'Default permissions.', type: 'any' },
};
