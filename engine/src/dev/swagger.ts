// Swagger UI for /docs, served from the swagger-ui-dist package's files (copied beside the bundle in dist/).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png', 'favicon-16x16.png']);

function assetDir(): string {
  const beside = path.join(__dirname, 'swagger-ui');
  if (existsSync(path.join(beside, 'swagger-ui-bundle.js'))) return beside;
  return path.dirname(require.resolve('swagger-ui-dist/package.json'));
}

export function swaggerHtml(title: string): string {
  const esc = title.replace(/[<>&"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>${esc}</title>
  <link rel="stylesheet" href="/docs/static/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/static/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/static/swagger-ui-bundle.js"></script>
  <script>
    window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true, tryItOutEnabled: true, displayRequestDuration: true });
  </script>
</body>
</html>
`;
}

/** The asset's bytes and content type, or undefined when it is not one we serve. */
export function swaggerAsset(name: string): { body: Buffer; type: string } | undefined {
  if (!ASSETS.has(name)) return undefined;
  const file = path.join(assetDir(), name);
  if (!existsSync(file)) return undefined;
  const type = name.endsWith('.css') ? 'text/css' : name.endsWith('.js') ? 'application/javascript' : 'image/png';
  return { body: readFileSync(file), type };
}
