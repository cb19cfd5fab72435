// An endpoint's health as the whole service sees it, the one place that computes it: REST `/health` answers its
// counts, GraphQL `health` its counts and notes. One node: its own figures, from memory. A cluster: every live node
// answers its part (the jobs it owns, the workers it runs, why its workers cannot start) through `/_cluster/health`,
// all endpoints of one request in one call, and the counts are summed; a live node that does not answer fails the
// request with a 503 that names it (cluster.ts).
import DataLoader from 'dataloader';
import type { Cluster } from './cluster';
import type { EndpointHealthView } from './graphql/resolvers';
import type { JobCounts } from './jobs/endpointJobs';
import type { JobEngine } from './jobs/jobEngine';

export interface WorkerCounts {
  idle: number;
  running: number;
  initializing: number;
}

/** What REST `/health` answers. */
export interface Health {
  jobs: JobCounts;
  workers: WorkerCounts;
}

/** Why workers cannot start, and what the machine lacks for them; null when nothing is wrong. */
export interface HealthNotes {
  lastError: string | null;
  hardwareNote: string | null;
  /**
   * Why no worker can start as long as the hosts stay as they are (no host of its datacenter, too few GPUs, a driver
   * too old; workers/hosts.ts `unplaceable`): of the service, when every node says so.
   */
  blocked: string | null;
  /**
   * This node leaves the endpoint's workers to the GPUs of other nodes (it has none for them: gpuOffers.ts), so its
   * `blocked` says nothing of the service: the nodes it defers to decide.
   */
  defers: boolean;
}

export type ServiceHealth = Health & HealthNotes;

export interface HealthDeps {
  engine: JobEngine;
  workerCounts(endpointId: string): WorkerCounts;
  /** This node's notes of an endpoint (its scheduler, hosts and templates). */
  notes(endpointId: string): HealthNotes;
  cluster?: Cluster;
}

const NODE_HEALTH_PATH = '/_cluster/health';

type NodePart = ServiceHealth & { node: string };

/** This node's part of an endpoint's health: its jobs (those it owns), its workers and its notes. */
function nodeHealth(d: HealthDeps, endpointId: string): ServiceHealth {
  return { jobs: d.engine.counts(endpointId), workers: d.workerCounts(endpointId), ...d.notes(endpointId) };
}

/**
 * The service's health of each endpoint: counts summed over the nodes; the first node's error (this one's first) and
 * every node's notes (another node's named), since machines differ. Blocked when every node that would run its
 * workers (all but those that defer to others' GPUs) says so.
 */
export async function serviceHealth(d: HealthDeps, endpointIds: string[]): Promise<ServiceHealth[]> {
  const sums = endpointIds.map((id) => nodeHealth(d, id));
  if (!d.cluster) return sums;
  const answers = await d.cluster.callOthers<NodePart[]>(NODE_HEALTH_PATH, { endpointIds });
  for (const [i, sum] of sums.entries()) {
    const notes = sum.hardwareNote ? [sum.hardwareNote] : [];
    const votes = sum.defers ? [] : [sum.blocked];
    for (const answer of answers) {
      const h = answer[i];
      if (!h) continue;
      for (const k of Object.keys(sum.jobs) as Array<keyof JobCounts>) sum.jobs[k] += Number(h.jobs?.[k]) || 0;
      for (const k of Object.keys(sum.workers) as Array<keyof WorkerCounts>) sum.workers[k] += Number(h.workers?.[k]) || 0;
      sum.lastError ??= h.lastError ? `on node ${h.node}: ${h.lastError}` : null;
      if (h.hardwareNote && h.hardwareNote !== sum.hardwareNote) notes.push(`on node ${h.node}: ${h.hardwareNote}`);
      if (!h.defers) votes.push(h.blocked ? (sum.defers ? `on node ${h.node}: ${h.blocked}` : h.blocked) : null);
    }
    sum.hardwareNote = notes.length ? notes.join('; ') : null;
    sum.blocked = votes.length > 0 && votes.every((v) => v !== null) ? votes[0] : null; // else a node can start them
    sum.defers = votes.length === 0;
  }
  return sums;
}

/** Answers the other nodes' calls for this node's part of endpoints' health. */
export function serveNodeHealth(cluster: Cluster, d: HealthDeps): void {
  cluster.serve(NODE_HEALTH_PATH, (body): NodePart[] => {
    const ids = (body as { endpointIds?: unknown } | null)?.endpointIds;
    return Array.isArray(ids) ? ids.map((id) => ({ ...nodeHealth(d, String(id)), node: cluster.nodeId })) : [];
  });
}

/**
 * GraphQL's `health` of one endpoint: the endpoints one answer lists are gathered, and the other nodes asked for them
 * in one call (a new loader per request: nothing is cached between requests).
 */
export function healthLoader(d: HealthDeps): (endpointId: string) => Promise<EndpointHealthView> {
  const loader = new DataLoader(
    async (ids: readonly string[]): Promise<EndpointHealthView[]> =>
      (await serviceHealth(d, [...ids])).map((h) => ({
        ...h.workers,
        inQueue: h.jobs.inQueue,
        inProgress: h.jobs.inProgress,
        lastError: h.lastError,
        hardwareNote: h.hardwareNote,
        blocked: h.blocked,
      })),
    { cache: false },
  );
  return (id) => loader.load(id);
}
