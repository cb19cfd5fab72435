// Markdown for Endpoint parameters and for GPU and CPU values, from the engine's catalog: what hover shows and
// what completion items carry as documentation.
import { cpuShapes, findCpu, findGpu, gpuGroups, gpuTypes, limits, type ParameterDoc } from '../../engine/src/catalog';

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

export const gpuValues = (): Array<{ id: string; enumClass: 'GpuGroup' | 'GpuType'; member: string }> => [
  ...gpuGroups.map((g) => ({ id: g.id, enumClass: 'GpuGroup' as const, member: g.enum })),
  ...gpuTypes.map((t) => ({ id: t.id, enumClass: 'GpuType' as const, member: t.enum })),
];

export const cpuValues = (): Array<{ id: string; enumClass: 'CpuInstanceType'; member: string }> =>
  cpuShapes.map((c) => ({ id: c.id, enumClass: 'CpuInstanceType' as const, member: c.enum }));
