// The jobs the extension itself submitted through run commands: a small in-memory list with their status and
// output, shown by the Jobs view with an icon per state and the actions each state allows (the view's item menus key
// on contextValue). Pure (no vscode), so that the view logic is tested with node.
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
  /** Run through the dev server (`strato dev`): a synchronous call, nothing to cancel, stream or retry. */
  viaDev?: boolean;
  /** The workspace folder's URI: where its platform and key come from. */
  folder?: string;
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
    return this.all().filter((j) => j.kind === 'QUEUE' && !j.viaDev && !isEnded(j.status));
  }
}

/** The icon and its colour per state (ThemeIcon and ThemeColor ids). */
export const JOB_ICONS: Record<JobState, { icon: string; color?: string }> = {
  IN_QUEUE: { icon: 'clock' },
  IN_PROGRESS: { icon: 'sync~spin' },
  COMPLETED: { icon: 'pass', color: 'testing.iconPassed' },
  FAILED: { icon: 'error', color: 'testing.iconFailed' },
  CANCELLED: { icon: 'circle-slash' },
  TIMED_OUT: { icon: 'watch', color: 'testing.iconFailed' },
  ERROR: { icon: 'error', color: 'testing.iconFailed' },
};

/**
 * `strato.job.<queue|call>.<STATE>`: the item menus offer stream and cancel for queued and running jobs of the
 * platform, retry for FAILED and TIMED_OUT ones (the jobs API's rules), and output for every job.
 */
export function jobContextValue(j: SubmittedJob): string {
  return `strato.job.${j.kind === 'QUEUE' && !j.viaDev ? 'queue' : 'call'}.${j.status}`;
}

export function jobNodes(list: JobList): TreeNode[] {
  return list.all().map((j) => ({
    id: `job:${j.id}`,
    label: j.route ? `${j.endpoint} ${j.route}` : j.endpoint,
    description: `${j.status.toLowerCase().replace('_', ' ')} · ${j.environment} · ${j.id.slice(0, 12)}`,
    tooltip: `${j.id}\n${j.environment}\n${new Date(j.submittedAt).toLocaleString()}${j.error ? `\n${j.error}` : ''}`,
    icon: JOB_ICONS[j.status].icon,
    iconColor: JOB_ICONS[j.status].color,
    contextValue: jobContextValue(j),
    endpoint: j.endpoint,
    environment: j.environment,
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
