// How a worker is started: a local Python process (the default), or something else that behaves like one (the
// preview's containers). The supervisor decides the worker's environment; a launcher only runs it.
import { spawn } from 'node:child_process';
import type { DeployedEndpoint } from '../controlPlane/service';
import type { Worker, WorkerProcess } from './worker';

export interface LaunchSpec {
  endpoint: DeployedEndpoint;
  /** The unpacked build on this machine. */
  root: string;
  /** The worker's own environment (endpoint env and STRATO_*), without what the platform's process inherits. */
  env: Record<string, string>;
  /** What a local process gets: the platform's inherited environment plus `env`. */
  processEnv: NodeJS.ProcessEnv;
  /** GPUs the endpoint asks for (0 for CPU endpoints). */
  gpuCount: number;
  /** The endpoint's network volumes, as folders on this machine (STRATO_VOLUME_PATH* in `env` point at them). */
  volumes: Array<{ name: string; hostPath: string }>;
}

export interface WorkerLauncher {
  launch(w: Worker, spec: LaunchSpec): WorkerProcess;
  /** True when it runs containers, so an endpoint's own image (`image=`) can run. */
  readonly runsImages?: boolean;
  /**
   * Why no worker can start now, whatever its endpoint (the container engine stopped answering), else null: asked
   * before each start, so that workers wait for it (health says why) instead of failing their endpoints' jobs.
   */
  unavailable?(): string | null;
}

export function localLauncher(python: string): WorkerLauncher {
  return {
    launch: (_w, s) => {
      // stdin is a pipe the worker watches (runtime.py): when this node dies, even by SIGKILL, its workers go too, and
      // none outlives it while another node starts workers in its slots (slots.ts).
      const child = spawn(python, ['-u', s.endpoint.config.handlerFile], {
        cwd: s.root,
        env: { ...s.processEnv, STRATO_PARENT_PIPE: '1' },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      child.stdin.on('error', () => {}); // the worker closed it: nothing to tell
      return child;
    },
  };
}
