// Pure tree building for the Endpoints and Environments views: plain nodes from the project model and the
// control plane's state, turned into vscode.TreeItems elsewhere (treeProvider.ts), so this is tested with node.
import { pathToFileURL } from 'node:url';
import { kindLabel, type EndpointCommandArgs } from '../../engine/src/protocol';
import { DEV_ENVIRONMENT, LIVE_PREFIX } from '../../engine/src/deploy';
import type { EndpointSpec, ProjectModel } from '../../engine/src/project';
import type { PreviewState } from '../../engine/src/preview';

/** Where a node points in the source: workspace-relative file and 0-based line. */
export interface NodeLocation {
  root: string;
  file: string;
  line: number;
}

export interface TreeNode {
  id: string;
  label: string;
  description?: string;
  tooltip?: string;
  /** ThemeIcon id. */
  icon?: string;
  contextValue?: string;
  location?: NodeLocation;
  /** A URL to open or copy (package.json offers Copy URL on the context values that have one: see URL_CONTEXT). */
  url?: string;
  /** Functions, routes and endpoints: what Run, Debug and Deploy get from the node's menu (as from a code lens). */
  endpointArgs?: EndpointCommandArgs;
  /** The endpoint a node stands for or belongs to (its name in the code), for commands run on the node. */
  endpoint?: string;
  /** The environment of a deployment node. */
  environment?: string;
  /** The project folder (workspace folder path) a node belongs to: the one commands on the node act on. */
  root?: string;
  /** ThemeColor id of the icon. */
  iconColor?: string;
  children?: TreeNode[];
}

/** The context value of a node whose only action is its URL (a route, a preview's endpoint): Copy URL matches it. */
export const URL_CONTEXT = 'strato.url';

/** What the control plane says about one deployed endpoint, keyed by endpoint name then environment. */
export interface EndpointDeployment {
  environment: string;
  url: string;
}
export type DeployedState = ReadonlyMap<string, readonly EndpointDeployment[]>;

export interface FolderModel {
  /** Workspace folder name (shown when there are several). */
  name: string;
  model: ProjectModel;
}

/**
 * `duplicate`: another endpoint of the project has its name (an error the editor and `strato check` point at): both
 * stay in the tree, each marked, and told apart by where they are.
 */
function endpointNode(folder: FolderModel, ep: EndpointSpec, deployed: readonly EndpointDeployment[], duplicate: boolean): TreeNode {
  const root = folder.model.root;
  const line = ep.callRange.start.line;
  const base = duplicate ? `ep:${root}:${ep.name}@${ep.file}:${line}` : `ep:${root}:${ep.name}`;
  const argsOf = (fn: string, route?: { method: EndpointCommandArgs['method']; path: string }): EndpointCommandArgs => ({
    endpoint: ep.name,
    function: fn,
    file: ep.file,
    uri: pathToFileURL(`${root.replace(/[\\/]+$/, '')}/${ep.file}`).href,
    kind: ep.kind,
    ...(route ? { method: route.method, path: route.path } : {}),
  });
  const hardware = ep.config.gpu?.length ? `GPU ${ep.config.gpu.join('|')}` : ep.config.cpu ? `CPU ${ep.config.cpu}` : '';
  const children: TreeNode[] = [];
  if (ep.kind === 'QUEUE') {
    for (const fn of ep.functions) {
      children.push({
        id: `${base}:fn:${fn.name}`,
        label: fn.name,
        description: `(${fn.params.map((p) => p.name).join(', ')})`,
        tooltip: fn.summary,
        icon: 'symbol-function',
        contextValue: 'strato.function',
        endpoint: ep.name,
        root,
        location: { root, file: ep.file, line: fn.range.start.line },
        endpointArgs: argsOf(fn.name),
      });
    }
  } else {
    for (const r of ep.routes) {
      children.push({
        id: `${base}:route:${r.method}:${r.path}`,
        label: `${r.method} ${r.path}`,
        description: r.function.name,
        tooltip: r.function.summary,
        icon: 'symbol-method',
        contextValue: 'strato.route',
        endpoint: ep.name,
        root,
        location: { root, file: ep.file, line: r.range.start.line },
        endpointArgs: argsOf(r.function.name, r),
      });
    }
  }
  for (const d of [...deployed].sort((a, b) => a.environment.localeCompare(b.environment))) {
    children.push({
      id: `${base}:env:${d.environment}`,
      label: d.environment,
      description: d.url,
      tooltip: d.url,
      icon: 'cloud',
      contextValue: 'strato.deployment',
      url: d.url,
      endpoint: ep.name,
      environment: d.environment,
      root,
    });
  }
  const state = deployed.length
    ? `deployed: ${deployed
        .map((d) => d.environment)
        .sort()
        .join(', ')}`
    : 'not deployed';
  return {
    id: base,
    label: ep.name,
    description: `${ep.kind === 'QUEUE' ? 'queue' : 'load-balanced'} · ${ep.file}:${line + 1}${duplicate ? ' · duplicate name' : ''}`,
    tooltip: [
      `${ep.name} (${kindLabel(ep.kind)})`,
      duplicate ? `another endpoint of the project is also named ${ep.name}: rename one (names are unique in a project)` : '',
      hardware,
      `${ep.file}:${line + 1}`,
      state,
    ]
      .filter(Boolean)
      .join('\n'),
    icon: duplicate ? 'error' : deployed.length ? 'cloud' : ep.kind === 'QUEUE' ? 'list-ordered' : 'server',
    ...(duplicate ? { iconColor: 'problemsErrorIcon.foreground' } : {}),
    contextValue: `strato.endpoint.${ep.kind}`,
    location: { root, file: ep.file, line },
    endpointArgs: children[0]?.endpointArgs,
    endpoint: ep.name,
    root,
    children,
  };
}

/** Endpoints of every folder, sorted by name; with several folders, one level per folder first. */
export function buildEndpointTree(folders: readonly FolderModel[], deployed: ReadonlyMap<string, DeployedState> = new Map()): TreeNode[] {
  const perFolder = folders.map((f) => {
    const state = deployed.get(f.model.root) ?? new Map();
    const eps = [...f.model.endpoints].sort((a, b) => a.name.localeCompare(b.name));
    const named = new Map<string, number>();
    for (const ep of eps) named.set(ep.name, (named.get(ep.name) ?? 0) + 1);
    return { f, nodes: eps.map((ep) => endpointNode(f, ep, state.get(ep.name) ?? [], named.get(ep.name)! > 1)) };
  });
  if (perFolder.length === 1) return uniqueIds(perFolder[0].nodes);
  return uniqueIds(
    perFolder.map(({ f, nodes }) => ({
      id: `folder:${f.model.root}`,
      label: f.name,
      icon: 'folder',
      children: nodes,
      description: `${nodes.length} endpoint(s)`,
    })),
  );
}

/**
 * VS Code refuses a tree in which two items share an id (the whole view stays empty). Ids say what a node stands for,
 * so that its expansion survives a refresh; where the code or the platform repeats something (a route declared twice,
 * two folders of one app), the repeats get `#2`, `#3`.
 */
export function uniqueIds(nodes: TreeNode[], seen = new Map<string, number>()): TreeNode[] {
  for (const n of nodes) {
    const times = (seen.get(n.id) ?? 0) + 1;
    seen.set(n.id, times);
    if (times > 1) n.id = `${n.id}#${times}`;
    if (n.children) uniqueIds(n.children, seen);
  }
  return nodes;
}

export interface EnvironmentInfo {
  app: string;
  environment: string;
  endpoints: Array<{ name: string; type: string; url: string; id?: string; routes?: Array<{ method: string; path: string }> }>;
}

const ENVIRONMENT_NODE = /^env:([^:]+):([^:#]+)(?:#\d+)?$/;

/** The app and environment of an environment's node in the Environments view (its id says them). */
export function environmentOfNode(node: Pick<TreeNode, 'id'>): { app: string; environment: string } | undefined {
  const m = ENVIRONMENT_NODE.exec(node.id);
  return m ? { app: m[1], environment: m[2] } : undefined;
}

/**
 * Environments of the app(s): each lists its endpoints with their URL, load-balanced ones their routes. `roots` maps
 * each app to the folder deployed as it: every node carries that root, so that a command on any of them (undeploy,
 * env get, logs, the typed client) acts on that project, whichever editor is active.
 */
export function buildEnvironmentTree(envs: readonly EnvironmentInfo[], roots: ReadonlyMap<string, string> = new Map()): TreeNode[] {
  const apps = new Set(envs.map((e) => e.app));
  return uniqueIds(
    [...envs]
      .sort((a, b) => a.app.localeCompare(b.app) || a.environment.localeCompare(b.environment))
      .map((e) => ({
        id: `env:${e.app}:${e.environment}`,
        label: e.environment,
        description: `${apps.size > 1 ? `${e.app} · ` : ''}${e.endpoints.length} endpoint(s)`,
        icon: 'cloud',
        contextValue: 'strato.environment',
        environment: e.environment,
        root: roots.get(e.app),
        children: [...e.endpoints]
          .sort((a, b) => a.name.localeCompare(b.name))
          .map((ep) => ({
            id: `env:${e.app}:${e.environment}:${ep.name}`,
            label: ep.name,
            description: ep.url,
            tooltip: `${ep.type}\n${ep.url}`,
            icon: ep.type === 'QUEUE' ? 'list-ordered' : 'server',
            url: ep.url,
            contextValue: 'strato.deployment',
            endpoint: codeNameOf(e.environment, ep.name),
            environment: e.environment,
            root: roots.get(e.app),
            children: (ep.routes ?? []).map((r) => ({
              id: `env:${e.app}:${e.environment}:${ep.name}:${r.method}:${r.path}`,
              label: `${r.method} ${r.path}`,
              description: `${ep.url}${r.path}`,
              icon: 'symbol-method',
              contextValue: URL_CONTEXT,
              url: `${ep.url}${r.path}`,
              root: roots.get(e.app),
            })),
          })),
      })),
  );
}

/** A running `deploy --preview` of a project, shown first in the Environments view while it runs. */
export function buildPreviewNode(app: string, p: PreviewState, root?: string): TreeNode {
  const endpoints = [...(p.endpoints ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  return {
    id: `preview:${app}`,
    label: 'preview',
    root,
    description: `${app} · ${endpoints.length ? `${endpoints.length} endpoint(s) in containers` : 'starting'} · ${p.network}`,
    tooltip: `strato deploy --preview (pid ${p.pid}), the platform in front at ${p.url}, network ${p.network}`,
    icon: 'vm-running',
    contextValue: 'strato.preview',
    children: endpoints.map((ep) => ({
      id: `preview:${app}:${ep.name}`,
      label: ep.name,
      description: ep.url,
      tooltip: `${kindLabel(ep.type)} (preview container)\n${ep.url}`,
      icon: ep.type === 'QUEUE' ? 'list-ordered' : 'server',
      contextValue: URL_CONTEXT,
      url: ep.url,
      children: ep.routes.map((r) => ({
        id: `preview:${app}:${ep.name}:${r.method}:${r.path}`,
        label: `${r.method} ${r.path}`,
        description: `${ep.url}${r.path}`,
        icon: 'symbol-method',
        contextValue: URL_CONTEXT,
        url: `${ep.url}${r.path}`,
      })),
    })),
  };
}

/** The name in the code of a deployed endpoint: the dev server's are `live-<name>` in its environment. */
export function codeNameOf(environment: string, deployedName: string): string {
  return environment === DEV_ENVIRONMENT && deployedName.startsWith(LIVE_PREFIX) ? deployedName.slice(LIVE_PREFIX.length) : deployedName;
}

/** Deployed state per endpoint name (in the code) from the environments of one app. */
export function deployedStateOf(envs: readonly EnvironmentInfo[]): DeployedState {
  const out = new Map<string, EndpointDeployment[]>();
  for (const e of envs) {
    for (const ep of e.endpoints) {
      const name = codeNameOf(e.environment, ep.name);
      const list = out.get(name) ?? [];
      list.push({ environment: e.environment, url: ep.url });
      out.set(name, list);
    }
  }
  return out;
}
