// The saveEndpoint input of one endpoint of an uploaded build, for deploy and dev alike. The platform reads the
// configuration from the build's manifest; only what the build cannot know travels: the key of endpoints that call others.
import type { ProjectModel } from '../project';
import type { EndpointInput } from '../protocol/controlPlane';
import { endpointCalls } from './calls';

export interface EndpointInputArgs {
  environmentId: string;
  buildId: string;
  /** The endpoint's name in the project. */
  name: string;
  /** Its name in the uploaded manifest, when that differs (dev's live- endpoints). */
  manifestName?: string;
  model: ProjectModel;
  /** The caller's key: endpoints that call other endpoints (found statically) get it as STRATO_API_KEY. */
  apiKey: string;
  /** What differs from the manifest on purpose (dev's live endpoints scale to zero; the preview runs one worker each). */
  overrides?: Pick<EndpointInput, 'workersMin' | 'workersMax'>;
}

export function endpointInput(a: EndpointInputArgs): EndpointInput {
  const input: EndpointInput = { environmentId: a.environmentId, buildId: a.buildId, name: a.manifestName ?? a.name, ...a.overrides };
  if (endpointCalls(a.model).has(a.name)) input.env = { STRATO_API_KEY: a.apiKey };
  return input;
}
