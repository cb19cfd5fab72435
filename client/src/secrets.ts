// "Strato: Set API Key": the user's key kept in VS Code's SecretStorage (the system keychain, never a settings file).
// It counts as the user's own, like STRATO_API_KEY in their environment, and is used only when neither that variable
// nor the project's .env sets a key (settings.ts effectiveEnv), so the trust rule of engine/src/api/trust.ts applies.
import * as vscode from 'vscode';
import { unsendableKey } from '../../engine/src/api';
import { UserError } from '../../engine/src/util';
import { guarded } from './errors';

const SECRET_KEY = 'strato.apiKey';
let stored: string | undefined;

/** The key in SecretStorage, read at activation and on every change (effectiveEnv is synchronous). */
export function storedApiKey(): string | undefined {
  return stored;
}

async function reload(secrets: vscode.SecretStorage): Promise<void> {
  stored = (await secrets.get(SECRET_KEY))?.trim() || undefined;
}

/** `strato.setApiKey` takes the key as its argument (scripts and tests), else asks in a password box. */
async function setApiKey(secrets: vscode.SecretStorage, arg: unknown): Promise<boolean> {
  const key =
    typeof arg === 'string'
      ? arg
      : await vscode.window.showInputBox({
          title: 'Strato: API key',
          prompt: "Your key for the Strato platform, kept in VS Code's secret storage. STRATO_API_KEY in your environment or the project's .env wins over it.",
          password: true,
          ignoreFocusOut: true,
          validateInput: (v) => (v.trim() ? (unsendableKey(v.trim(), 'the key') ?? undefined) : 'paste the key, e.g. strato_...'),
        });
  if (key === undefined) return false;
  if (!key.trim()) throw new UserError('the API key is empty: paste the key your platform gave you (strato keys create prints one).');
  // The one rule of what a key may hold (engine/src/api/config.ts): a key that cannot be sent is not stored.
  const problem = unsendableKey(key.trim(), 'the API key');
  if (problem) throw new UserError(`${problem}.`);
  await secrets.store(SECRET_KEY, key.trim());
  await reload(secrets);
  const shadowed = process.env.STRATO_API_KEY ? ' STRATO_API_KEY in your environment still wins over it.' : '';
  void vscode.window.showInformationMessage(`Strato: API key stored in VS Code's secret storage.${shadowed}`);
  return true;
}

export async function registerSecrets(context: vscode.ExtensionContext, changed: () => void): Promise<vscode.Disposable[]> {
  await reload(context.secrets);
  return [
    context.secrets.onDidChange(async (e) => {
      if (e.key !== SECRET_KEY) return;
      await reload(context.secrets);
      changed();
    }),
    vscode.commands.registerCommand('strato.setApiKey', (arg?: unknown) => guarded('set API key', () => setApiKey(context.secrets, arg))),
    vscode.commands.registerCommand('strato.clearApiKey', () =>
      guarded('remove API key', async () => {
        const had = (await context.secrets.get(SECRET_KEY)) !== undefined;
        await context.secrets.delete(SECRET_KEY);
        await reload(context.secrets);
        void vscode.window.showInformationMessage(
          had ? "Strato: API key removed from VS Code's secret storage." : "Strato: no API key was stored in VS Code's secret storage: nothing to remove.",
        );
        return had;
      }),
    ),
  ];
}
