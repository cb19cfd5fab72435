// What the scheduler keeps per endpoint on this node, and the two tests every part of it applies to a worker.
import type { DeployedEndpoint } from '../controlPlane/service';
import { StartFailures } from './startFailures';
import type { Worker } from './worker';

export interface EndpointWorkers {
  workers: Set<Worker>;
  starts: StartFailures;
  /** When QUEUE_DELAY last added a worker (platform clock). */
  lastScaleUpAt: number;
  /** Why the last wanted worker could not start (no free GPU), else null. */
  waiting: string | null;
  /** A slot claim is in flight (one at a time per endpoint). */
  claiming: boolean;
  /**
   * Until then this node claims slots of the minimum only up to its share, so that they spread over the nodes; set
   * when it first reached its share (0: not yet), and later claims take any free slot of the minimum.
   */
  fairUntil: number;
  /**
   * Since when other nodes' jobs have been this node's to take without a break (`backlog`, platform clock): they waited
   * at least that long, what QUEUE_DELAY goes by when none waits here (they move only to a waiting worker).
   */
  backlogSince: number | undefined;
}

export function newEndpointWorkers(): EndpointWorkers {
  return { workers: new Set(), starts: new StartFailures(), lastScaleUpAt: 0, waiting: null, claiming: false, fairUntil: 0, backlogSince: undefined };
}

/** Starting or serving: a worker that counts for the endpoint (not draining, stopping or gone). */
export const isLive = (w: Worker): boolean => w.phase === 'initializing' || w.phase === 'ready';

/** Of the endpoint's current revision, on a slot its workers max still has (else it finishes and goes). */
export const fitsRevision = (w: Worker, ep: DeployedEndpoint): boolean => w.revision === ep.revision && (w.slot ?? 0) < ep.config.workersMax;
