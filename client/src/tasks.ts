// The `strato` task type: build, deploy and dev as VS Code tasks (Terminal > Run Task, tasks.json) that run the
// bundled `strato` command; the problem matchers $strato and $strato-watch (package.json) turn the CLI's
// `file:line:col: severity: message [code]` lines into problems.
import * as vscode from 'vscode';
import { bundledCli, cliProcessEnv } from './settings';
import { messageOf } from './errors';

export const TASK_TYPE = 'strato';
const COMMANDS = ['build', 'deploy', 'dev'] as const;

export interface StratoTaskDefinition extends vscode.TaskDefinition {
  command: (typeof COMMANDS)[number];
  /** deploy: the environment (--env). */
  env?: string;
  /** More arguments of the command. */
  args?: string[];
}

function taskOf(def: StratoTaskDefinition, folder: vscode.WorkspaceFolder): vscode.Task {
  const args = [def.command, ...(def.command === 'deploy' && def.env ? ['--env', def.env] : []), ...(def.args ?? [])];
  // VS Code's executable runs as Node with ELECTRON_RUN_AS_NODE (cliProcessEnv sets it).
  const exec = new vscode.ProcessExecution(process.execPath, [bundledCli(), ...args], { cwd: folder.uri.fsPath, env: cliProcessEnv(folder) });
  const dev = def.command === 'dev';
  const task = new vscode.Task(def, folder, args.join(' '), TASK_TYPE, exec, dev ? '$strato-watch' : '$strato');
  if (def.command === 'build') task.group = vscode.TaskGroup.Build;
  task.isBackground = dev;
  task.detail = { build: 'build the artifact', deploy: 'build, upload, provision, configure', dev: 'development server with live- endpoints' }[def.command];
  return task;
}

export function registerTasks(): vscode.Disposable {
  return vscode.tasks.registerTaskProvider(TASK_TYPE, {
    provideTasks: () => {
      const tasks: vscode.Task[] = [];
      for (const folder of (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file')) {
        try {
          for (const command of COMMANDS) tasks.push(taskOf({ type: TASK_TYPE, command }, folder));
        } catch (e) {
          void vscode.window.showErrorMessage(messageOf(e)); // an untrusted workspace URL: no task may send the key there
        }
      }
      return tasks;
    },
    resolveTask: (task) => {
      const def = task.definition as StratoTaskDefinition;
      const folder = task.scope && typeof task.scope === 'object' ? task.scope : vscode.workspace.workspaceFolders?.[0];
      if (!COMMANDS.includes(def.command) || !folder) return undefined;
      try {
        return taskOf(def, folder);
      } catch (e) {
        void vscode.window.showErrorMessage(messageOf(e));
        return undefined;
      }
    },
  });
}
