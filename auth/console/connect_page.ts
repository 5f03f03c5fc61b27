/**
 * "Connect a client": the `mcpServers` JSON of SPEC.md part 4 for the live products, built by the
 * same function as `npm run client-config` (shared/client_config.ts). Usable without JavaScript
 * (the JSON is in <pre> blocks and the choice is a GET form); with it, copy buttons appear. The one
 * inline script is allowed by its hash in the page's Content-Security-Policy, nothing else runs.
 */
import { createHash } from 'node:crypto';
import type { Catalog } from '../../shared/catalog.js';
import { buildClientConfig, type ClientConfig } from '../../shared/client_config.js';
import { html, Html } from './html.js';

/** Shows every copy button and copies its target's text; says "Copied" for two seconds. */
const COPY_SCRIPT = `for (const button of document.querySelectorAll('button[data-copy]')) {
  button.hidden = false;
  button.addEventListener('click', async () => {
    const text = document.getElementById(button.dataset.copy).textContent;
    try { await navigator.clipboard.writeText(text); button.textContent = 'Copied'; }
    catch { const range = document.createRange(); range.selectNodeContents(document.getElementById(button.dataset.copy)); getSelection().removeAllRanges(); getSelection().addRange(range); button.textContent = 'Selected: press Ctrl+C'; }
    setTimeout(() => { button.textContent = 'Copy'; }, 2000);
  });
}`;

/** CSP source for COPY_SCRIPT (CSP3 hash-source). */
export const COPY_SCRIPT_HASH = `'sha256-${createHash('sha256').update(COPY_SCRIPT).digest('base64')}'`;

export interface ConnectChoice {
  products: string[];
  readOnly: boolean;
}

export function connectPage(
  catalog: Catalog,
  urls: { authUrl: string; mcpUrl: string },
  choice: ConnectChoice,
  base: string,
): Html {
  const live = catalog.products.filter((p) => catalog.isLive(p.id));
  const chosen = choice.products.length ? choice.products : live.map((p) => p.id);
  // None chosen is every live product, which buildClientConfig picks itself (none, when nothing is live).
  const all = buildClientConfig(catalog, urls, { products: choice.products.length ? choice.products : undefined, readOnly: choice.readOnly });
  const one = (product: string): ClientConfig => buildClientConfig(catalog, urls, { products: [product], readOnly: choice.readOnly });

  return html`
    <h1>Connect a client</h1>
    <section class="card">
      <p>Add this to your AI client's MCP configuration (the <code>mcpServers</code> object). The first time the client
        uses a server, it opens a browser window where you sign in, choose the organization and allow the scopes.
        Each server is connected separately, and every connection then shows up under <a href="${base}/connections">Connections</a>,
        where you can revoke it at any time.</p>
      <form method="get" action="${base}/connect">
        <fieldset style="border:0;padding:0;margin:0"><legend><strong>Servers</strong></legend>
          <div class="filters">${live.map((p) => html`<label style="font-weight:400"><input type="checkbox" name="product" value="${p.id}" style="width:auto" ${chosen.includes(p.id) ? new Html('checked') : ''}> ${p.title}</label>`)}</div>
        </fieldset>
        <label style="font-weight:400"><input type="checkbox" name="read_only" value="1" style="width:auto" ${choice.readOnly ? new Html('checked') : ''}> Read-only (for review sessions: read scopes only)</label>
        <p><button type="submit">Show configuration</button></p>
      </form>
      ${configBlock('config-all', `mcpServers for ${chosen.length === live.length ? 'every server' : chosen.join(', ')}${choice.readOnly ? ', read-only' : ''}`, all)}
    </section>
    ${catalog.products.filter((p) => chosen.includes(p.id)).map((p) => html`
    <section class="card" aria-labelledby="h-${p.id}">
      <h2 id="h-${p.id}" style="margin-top:0;font-size:1.1rem">${p.title} <span class="muted" style="font-weight:400">${p.kind}</span></h2>
      ${configBlock(`config-${p.id}`, `mcpServers entry for ${p.title}`, one(p.id))}
      <table><thead><tr><th>Scope</th><th>Allows</th></tr></thead><tbody>
        ${one(p.id).mcpServers[Object.keys(one(p.id).mcpServers)[0]].auth.scopes.map((scope) => html`<tr><td><code>${scope}</code></td><td>${catalog.describeScope(scope) ?? ''}</td></tr>`)}
      </tbody></table>
    </section>`)}
    <script>${new Html(COPY_SCRIPT)}</script>`;
}

function configBlock(id: string, label: string, json: ClientConfig): Html {
  return html`<div style="position:relative">
    <p class="muted" style="margin:.5rem 0 .25rem">${label} <button type="button" class="secondary" data-copy="${id}" hidden>Copy</button></p>
    <pre id="${id}" tabindex="0" aria-label="${label}" style="background:#0f172a;color:#e2e8f0;padding:1rem;border-radius:8px;overflow:auto;font-size:.85rem">${JSON.stringify(json, null, 2)}</pre>
  </div>`;
}
