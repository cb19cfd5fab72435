// The endpoints of a deploy or a preview, grouped by type as the specification asks: load-balanced ones with their
// URL and routes, queue-based ones with their /runsync URL, each with a sample call.
import type { Endpoint } from '../protocol/controlPlane';
import { bold, cyan, dim } from './output';

export interface ListingOptions {
  /** The sample call of an endpoint (deploy/samples.ts, loaded by the command). */
  sample(e: Endpoint): string;
  /** Text after the name (the preview shows the image). */
  note?(e: Endpoint): string;
}

export function printEndpoints(endpoints: readonly Endpoint[], o: ListingOptions): void {
  const name = (e: Endpoint) => `  ${cyan(e.name)}${o.note ? `  ${o.note(e)}` : ''}`;
  const lb = endpoints.filter((e) => e.type === 'LOAD_BALANCED');
  const queue = endpoints.filter((e) => e.type === 'QUEUE');
  if (lb.length) {
    process.stdout.write(`\n${bold('Load-balanced endpoints')}\n`);
    for (const e of lb) {
      process.stdout.write(`${name(e)}  ${e.url}\n`);
      for (const route of e.routes) process.stdout.write(`    ${route.method.padEnd(6)} ${route.path}\n`);
      process.stdout.write(`  ${dim('sample:')} ${o.sample(e)}\n`);
    }
  }
  if (queue.length) {
    process.stdout.write(`\n${bold('Queue-based endpoints')}\n`);
    for (const e of queue) {
      process.stdout.write(`${name(e)}  ${e.url}/runsync\n`);
      process.stdout.write(`  ${dim('sample:')} ${o.sample(e)}\n`);
    }
  }
}
