// What a preview leaves must go: its containers and network (found by label), and a previous preview of the same
// project, which is stopped first (a second preview replaces the first).
import fs from 'node:fs';
import { isPreviewProcess as alive } from './state';
import { listContainers, listNetworks, removeContainer, removeNetwork, type DockerEngine } from '../containers';

/** Force-removes the labelled containers, then the labelled networks. */
export async function removeLeftovers(engine: DockerEngine, label: string, log: (line: string) => void): Promise<number> {
  let removed = 0;
  for (const c of await listContainers(engine, label)) {
    await removeContainer(engine, c.Id).catch((e: Error) => log(`strato preview: could not remove container ${c.Names[0] ?? c.Id}: ${e.message}`));
    removed++;
  }
  for (const n of await listNetworks(engine, label)) {
    await removeNetwork(engine, n.Id).catch((e: Error) => log(`strato preview: could not remove network ${n.Name}: ${e.message}`));
    removed++;
  }
  return removed;
}

/** Stops the preview recorded in the state file (SIGTERM, so it cleans up itself), then removes what is left. */
export async function replacePrevious(engine: DockerEngine, stateFile: string, label: string): Promise<void> {
  let pid = 0;
  try {
    pid = (JSON.parse(fs.readFileSync(stateFile, 'utf8')) as { pid: number }).pid;
  } catch {
    /* no previous preview */
  }
  if (pid && pid !== process.pid && alive(pid)) {
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + 20_000;
    while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  }
  await removeLeftovers(engine, label, () => {});
}
