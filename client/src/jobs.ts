// The jobs the extension itself submitted through run commands: a small in-memory list with their status and
// output, shown by the Jobs view. Pure (no vscode), so that the view logic is tested with node.
import type { EndpointKind } from '../../engine/src/protocol';
import type { TreeNode } from './endpointTree';

export type JobState = 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED' | 'FAILED' | 'CANCELLED' | 'TIMED_OUT' | 'ERROR';

export interface SubmittedJob {
  /** The platform's job id (queue), or a local id for a route call. */
  id: string;
  endpoint: string;
  endpointId: string;
  environment: string;
  kind: EndpointKind;
  /** For a route call: `POST /process`. */
  route?: string;
  input: Record<string, unknown>;
  status: JobState;
  output?: unknown;
  error?: string;
  submittedAt: number;
  executionTime?: number;
}

const ENDED: readonly JobState[] = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT', 'ERROR'];
export const isEnded = (s: JobState) => ENDED.includes(s);

export class JobList {
  private readonly jobs = new Map<string, SubmittedJob>();
  constructor(private readonly limit = 100) {}

  upsert(job: SubmittedJob): SubmittedJob {
    const prev = this.jobs.get(job.id);
    const merged = { ...prev, ...job };
    this.jobs.set(job.id, merged);
    while (this.jobs.size > this.limit) this.jobs.delete(this.jobs.keys().next().value as string);
    return merged;
  }

  get(id: string): SubmittedJob | undefined {
    return this.jobs.get(id);
  }

  /** Newest first. */
  all(): SubmittedJob[] {
    return [...this.jobs.values()].sort((a, b) => b.submittedAt - a.submittedAt);
  }

  pending(): SubmittedJob[] {
    return this.all().filter((j) => j.kind === 'QUEUE' && !isEnded(j.status));
  }
}

const ICONS: Record<JobState, string> = {
  IN_QUEUE: 'clock',
  IN_PROGRESS: 'sync',
  COMPLETED: 'pass',
  FAILED: 'error',
  CANCELLED: 'circle-slash',
  TIMED_OUT: 'watch',
  ERROR: 'error',
};

export function jobNodes(list: JobList): TreeNode[] {
  return list.all().map((j) => ({
    id: `job:${j.id}`,
    label: j.route ? `${j.endpoint} ${j.route}` : j.endpoint,
    description: `${j.status.toLowerCase().replace('_', ' ')} · ${j.id.slice(0, 12)}`,
    tooltip: `${j.id}\n${j.environment}\n${new Date(j.submittedAt).toLocaleString()}${j.error ? `\n${j.error}` : ''}`,
    icon: ICONS[j.status],
    contextValue: 'strato.job',
  }));
}

/** The text a click on a job shows. */
export function jobReport(j: SubmittedJob): string {
  const lines = [
    `${j.endpoint}${j.route ? ` ${j.route}` : ''} (${j.environment}) — job ${j.id}`,
    `status: ${j.status}${j.executionTime !== undefined ? ` in ${j.executionTime} ms` : ''}`,
    `input: ${JSON.stringify(j.input)}`,
  ];
  if (j.error) lines.push(`error: ${j.error}`);
  if (j.output !== undefined) lines.push('output:', JSON.stringify(j.output, null, 2));
  return lines.join('\n');
}
