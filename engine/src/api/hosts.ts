// The worker hosts of a platform (its own machine and the hosts of `strato platform agent`), as
// `strato platform status` lists them: `GET /_agent/hosts`, an admin key's view.
import type { HostView } from '../protocol/agents';
import { UserError } from '../util/errors';
import { errorText, send, type ApiTarget } from './http';

export async function listHosts(target: ApiTarget): Promise<HostView[]> {
  const r = await send(target, 'GET', '/_agent/hosts', { timeoutMs: 10_000 });
  if (r.status !== 200) throw new UserError(`the platform at ${target.baseUrl} did not list its worker hosts (${r.status}): ${errorText(r.body)}`);
  return (r.body as { hosts: HostView[] }).hosts;
}
