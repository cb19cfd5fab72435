// The two kinds of deployed endpoint and the methods of load-balanced routes, spelled once: the analysis, the manifest
// writer, the control plane, the dev server, the language server and the extension use these (kindLabel() for people).
export type EndpointKind = 'QUEUE' | 'LOAD_BALANCED';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export const ENDPOINT_KINDS: readonly EndpointKind[] = ['QUEUE', 'LOAD_BALANCED'];

/** How a kind reads in prose and tables: "queue-based" / "load-balanced"; `short` gives the dev table's QB / LB. */
export function kindLabel(kind: EndpointKind, form: 'long' | 'short' = 'long'): string {
  if (form === 'short') return kind === 'QUEUE' ? 'QB' : 'LB';
  return kind === 'QUEUE' ? 'queue-based' : 'load-balanced';
}
