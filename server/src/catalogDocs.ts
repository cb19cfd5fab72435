// Markdown for Endpoint parameters and for GPU and CPU values, from the engine's catalog: what hover shows and
// what completion items carry as documentation.
import {
  cpuShapes,
  cudaVersions,
  datacenters,
  enumClasses,
  findCpu,
  findGpu,
  gpuGroups,
  gpuTypes,
  limits,
  scalerTypes,
  type ParameterDoc,
} from '../../engine/src/catalog';

export function parameterMarkdown(p: ParameterDoc): string {
  const lines = [`**${p.name}**: \`${p.type}\``, '', p.doc, '', `Default: ${p.default}`];
  const bounds = limitsOf(p);
  if (bounds) lines.push('', `Limits: ${bounds}`);
  return lines.join('\n');
}

function limitsOf(p: ParameterDoc): string | undefined {
  if (p.name === 'workers') return `0 <= min <= max <= ${limits.workersMaxUpperBound}, max >= 1`;
  if (p.name === 'name') return '1 to 63 characters';
  if (p.min !== undefined && p.max !== undefined) return `${p.min} to ${p.max}`;
  if (p.min !== undefined) return `at least ${p.min}`;
  return undefined;
}

/** Markdown for a GPU group id or GPU model name; undefined when it is neither. */
export function gpuMarkdown(value: string): string | undefined {
  const found = findGpu(value);
  if (!found) return undefined;
  if (found.type) {
    const t = found.type;
    const group = found.group;
    return [
      `**${t.id}** (\`GpuType.${t.enum}\`): GPU model`,
      '',
      `Memory: ${t.memoryGb} GB`,
      '',
      `Group: ${t.group}${group ? ` (${group.description})` : ''}`,
    ].join('\n');
  }
  const g = found.group!;
  if (g.id === 'any') return `**any** (\`GpuGroup.ANY\`): any available GPU`;
  return [
    `**${g.id}** (\`GpuGroup.${g.enum}\`): GPU group, ${g.description}`,
    '',
    `Memory: ${g.memoryGb} GB per GPU`,
    '',
    `Models: ${g.models.join(', ')}`,
  ].join('\n');
}

/** Markdown for a CPU shape id; undefined when it is not one. */
export function cpuMarkdown(value: string): string | undefined {
  const c = findCpu(value);
  if (!c) return undefined;
  return [
    `**${c.id}** (\`CpuInstanceType.${c.enum}\`): CPU shape, ${c.description}`,
    '',
    `${c.vcpus} vCPU${c.vcpus === 1 ? '' : 's'}, ${c.memoryGb} GB memory (family ${c.family})`,
  ].join('\n');
}

/** A GPU or CPU value's markdown, whichever it is. */
export function hardwareMarkdown(value: string): string | undefined {
  return gpuMarkdown(value) ?? cpuMarkdown(value);
}

/** One short line for a completion item's detail. */
export function hardwareDetail(value: string): string {
  const gpu = findGpu(value);
  if (gpu?.type) return `${gpu.type.memoryGb} GB, group ${gpu.type.group}`;
  if (gpu?.group) return gpu.group.id === 'any' ? 'any available GPU' : `${gpu.group.description}: ${gpu.group.models.join(', ')}`;
  const cpu = findCpu(value);
  return cpu ? `${cpu.vcpus} vCPU, ${cpu.memoryGb} GB, ${cpu.description}` : '';
}

/** A value a parameter takes: its id and the enum member that names it. */
export interface CatalogValue {
  id: string;
  enumClass: string;
  member: string;
}

const membersOf = (enumClass: string): CatalogValue[] => Object.entries(enumClasses[enumClass]).map(([member, id]) => ({ id, enumClass, member }));

/** The values completion offers for a parameter, or undefined when it has no fixed set. */
export function parameterValues(param: string): readonly CatalogValue[] | undefined {
  switch (param) {
    case 'gpu':
      return [
        ...gpuGroups.map((g) => ({ id: g.id, enumClass: 'GpuGroup', member: g.enum })),
        ...gpuTypes.map((t) => ({ id: t.id, enumClass: 'GpuType', member: t.enum })),
      ];
    case 'cpu':
      return cpuShapes.map((c) => ({ id: c.id, enumClass: 'CpuInstanceType', member: c.enum }));
    case 'datacenter':
      return membersOf('DataCenter');
    case 'min_cuda_version':
      return membersOf('CudaVersion');
    case 'scaler_type':
      return membersOf('ServerlessScalerType');
    default:
      return undefined;
  }
}

/** Markdown for any catalog value (GPU, CPU shape, datacenter, scaler type), undefined when unknown. */
export function valueMarkdown(value: string): string | undefined {
  const dc = datacenters.find((d) => d.id === value);
  if (dc) return `**${dc.id}** (\`DataCenter.${dc.id.replace(/-/g, '_')}\`): datacenter in ${dc.location}`;
  const scaler = scalerTypes.find((t) => t.id === value);
  if (scaler) return `**${scaler.id}** (\`ServerlessScalerType.${scaler.id}\`): ${scaler.doc}`;
  if (cudaVersions.includes(value))
    return `**CUDA ${value}** (\`CudaVersion.V${value.replace('.', '_')}\`): GPU workers start only on a driver that supports CUDA ${value} or later`;
  return hardwareMarkdown(value);
}

/** One short line for a completion item's detail. */
export function valueDetail(value: string): string {
  const dc = datacenters.find((d) => d.id === value);
  if (dc) return dc.location;
  if (scalerTypes.some((t) => t.id === value)) return 'scaler type';
  if (/^\d+\.\d$/.test(value)) return `CUDA ${value}`;
  return hardwareDetail(value);
}
