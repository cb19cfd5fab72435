// How many workers an endpoint wants on this node for the work it has here, by its scaler (the reference product's
// two): REQUEST_COUNT keeps one worker per `scaler_value` requests queued or in progress; QUEUE_DELAY starts the first
// worker at once, then adds one each time the oldest queued job has waited more than `scaler_value` seconds (at most
// one per `scaler_value` seconds, and never more than the work can use). Never above `workers.max`; the minimum is the
// whole service's, kept by the slots below it (scheduler.ts), so only the work counts here.
import type { ResolvedEndpointConfig } from '../controlPlane/endpointConfig';

export interface ScalingState {
  /** Workers of the endpoint's current revision on this node. */
  current: number;
  /** Jobs queued or in progress (a load-balanced endpoint: requests waiting or in flight). */
  work: number;
  /** When the oldest queued job was queued, on the platform's clock; undefined when none waits (asked only for QUEUE_DELAY). */
  oldestQueuedAt(): number | undefined;
  now: number;
  /** When QUEUE_DELAY last added a worker. */
  lastScaleUpAt: number;
}

/** The number of workers wanted, and whether QUEUE_DELAY added one now (the caller keeps `lastScaleUpAt`). */
export function wantedWorkers(
  cfg: Pick<ResolvedEndpointConfig, 'kind' | 'workersMax' | 'maxConcurrency' | 'scalerType' | 'scalerValue'>,
  s: ScalingState,
): { wanted: number; scaledUp: boolean } {
  const clamp = (n: number) => Math.min(cfg.workersMax, Math.max(0, n));
  if (s.work === 0) return { wanted: clamp(0), scaledUp: false };
  if (cfg.scalerType === 'REQUEST_COUNT' || cfg.kind === 'LOAD_BALANCED') return { wanted: clamp(Math.ceil(s.work / cfg.scalerValue)), scaledUp: false };
  const useful = Math.ceil(s.work / cfg.maxConcurrency);
  const delayMs = cfg.scalerValue * 1000;
  const oldest = s.oldestQueuedAt();
  const waitedTooLong = oldest !== undefined && s.now - oldest > delayMs;
  const scaledUp = waitedTooLong && s.current > 0 && s.now - s.lastScaleUpAt >= delayMs && s.current < useful;
  const n = scaledUp ? s.current + 1 : Math.max(s.current, 1);
  return { wanted: clamp(Math.min(n, Math.max(useful, s.current))), scaledUp };
}
