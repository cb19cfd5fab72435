// The control plane's records as the store holds them: an endpoint's row and back, and a build's manifest text read
// (refused with what to do when it is not one), and new endpoint ids.
import { randomBytes } from 'node:crypto';
import type { Manifest } from '../../protocol/manifest';
import { badRequest } from '../errors';
import type { EndpointRow } from '../store/types';
import { storedConfig } from './endpointConfig';
import type { DeployedEndpoint } from './service';

/** Endpoint ids look like the reference product's: 14 lowercase letters and digits. */
export function endpointId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(14)].map((b) => alphabet[b % 36]).join('');
}

export function parseManifest(text: string): Manifest {
  let m: Manifest;
  try {
    m = JSON.parse(text) as Manifest;
  } catch (e) {
    throw badRequest(`the manifest is not valid JSON (${(e as Error).message}); rebuild the project`);
  }
  if (!m || typeof m !== 'object' || typeof m.resources !== 'object' || m.resources === null)
    throw badRequest('the manifest has no "resources" map; rebuild the project with strato build');
  return m;
}

export function toRow(e: DeployedEndpoint): EndpointRow {
  return {
    id: e.id,
    app_id: e.appId,
    environment_id: e.environmentId,
    name: e.name,
    build_id: e.buildId,
    config: JSON.stringify(e.config),
    created_at: e.createdAt,
    updated_at: e.revision,
  };
}

export function fromRow(r: EndpointRow): DeployedEndpoint {
  return {
    id: r.id,
    name: r.name,
    appId: r.app_id,
    environmentId: r.environment_id,
    buildId: r.build_id,
    config: storedConfig(r.config),
    revision: Number(r.updated_at),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}
