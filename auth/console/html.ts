/** Server-rendered HTML for the console: template literals with one escape helper, no framework. */

function esc(value: unknown): string {
  return String(value ?? '').replace(/[&<>"'`=]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Marks already-escaped markup so it can be nested without double escaping. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0];
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1];
  });
  return new Html(out);
}

function render(value: unknown): string {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === undefined || value === null || value === false) return '';
  return esc(value);
}

const STYLE = `
:root{--ink:#1b1f24;--muted:#5b6470;--line:#e3e6ea;--bg:#f6f7f9;--card:#fff;--accent:#2f5bd3;--danger:#b42318;--ok:#127a3e}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg)}
header{background:#111827;color:#fff;padding:.75rem 1.5rem;display:flex;flex-wrap:wrap;gap:.75rem 1.5rem;align-items:center}header nav{display:flex;flex-wrap:wrap;gap:.25rem 1rem}
header a{color:#d1d5db;text-decoration:none}header a[aria-current=page]{color:#fff;font-weight:600}
header .brand{font-weight:700;color:#fff;margin-right:1rem}header form{margin-left:auto;display:flex;flex-wrap:wrap;gap:.75rem;align-items:center;color:#d1d5db;min-width:0;overflow-wrap:anywhere}
main{max-width:1100px;margin:1.5rem auto;padding:0 1.5rem}h1{font-size:1.4rem;margin:.2rem 0 1rem;overflow-wrap:anywhere}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:1.25rem;margin-bottom:1.25rem;overflow-x:auto}
table{width:100%;border-collapse:collapse}th,td{text-align:left;padding:.55rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:.8rem;text-transform:uppercase;letter-spacing:.03em;color:var(--muted)}
.muted{color:var(--muted)}.badge{display:inline-block;padding:.05rem .45rem;border-radius:999px;font-size:.78rem;border:1px solid var(--line);background:#f1f3f5}
.badge.warn{background:#fff4e5;border-color:#f5c27a}.badge.bad{background:#fdecea;border-color:#f2b8b5;color:var(--danger)}.badge.ok{background:#e8f5ee;border-color:#a6d8bb;color:var(--ok)}
button,.button{font:inherit;border:1px solid var(--accent);background:var(--accent);color:#fff;border-radius:7px;padding:.4rem .9rem;cursor:pointer;text-decoration:none;display:inline-block}
button.secondary,.button.secondary{background:#fff;color:var(--accent)}button.danger{background:var(--danger);border-color:var(--danger)}
label{display:block;font-weight:600;margin:.6rem 0 .2rem}input,select{font:inherit;padding:.4rem .5rem;border:1px solid #c8cdd3;border-radius:6px;width:100%}
.filters{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:.5rem 1rem;align-items:end}
.narrow{max-width:380px;margin:3rem auto;overflow-wrap:anywhere}.error{background:#fdecea;border:1px solid #f2b8b5;color:var(--danger);padding:.6rem .8rem;border-radius:7px}
.notice{background:#fff4e5;border:1px solid #f5c27a;padding:.6rem .8rem;border-radius:7px}
ul.scopes{margin:0;padding-left:1.1rem}code{font-size:.85em;background:#f1f3f5;padding:.05rem .3rem;border-radius:4px}code.checkpoint{overflow-wrap:anywhere}
.pager{display:flex;flex-wrap:wrap;gap:.5rem;margin-top:1rem}.pager .older{margin-left:auto}td time{white-space:nowrap}
`;

export interface LayoutOptions {
  title: string;
  current?: 'connections' | 'audit' | 'connect';
  basePath: string;
  /** `switchable`: the person is in several organizations, and may choose another. */
  who?: { email: string; tenant: string; role: string; csrf: string; switchable?: boolean };
}

export function page(options: LayoutOptions, body: Html): string {
  const nav = options.who
    ? html`<nav aria-label="Console">
        <a href="${options.basePath}/connections" ${options.current === 'connections' ? new Html('aria-current="page"') : ''}>Connections</a>
        <a href="${options.basePath}/audit" ${options.current === 'audit' ? new Html('aria-current="page"') : ''}>Audit log</a>
        <a href="${options.basePath}/connect" ${options.current === 'connect' ? new Html('aria-current="page"') : ''}>Connect a client</a>
      </nav>
      <form method="post" action="${options.basePath}/logout">
        <span>${options.who.email} · ${options.who.tenant} (${options.who.role})</span>
        ${options.who.switchable ? html`<a href="${options.basePath}/organization">Switch organization</a>` : ''}
        <input type="hidden" name="csrf" value="${options.who.csrf}">
        <button type="submit" class="secondary">Sign out</button>
      </form>`
    : '';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(options.title)} · Portico</title><style>${STYLE}</style></head>
<body><header><span class="brand">Portico</span>${render(nav)}</header><main>${body.value}</main></body></html>`;
}

export function time(ms: number | null | undefined): Html {
  if (!ms) return html`<span class="muted">never</span>`;
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
}

/** `1 call`, `2 calls`, `0 calls`. */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

const PALETTE = ['#2f5bd3', '#127a3e', '#b25e09', '#8e44ad', '#c0392b', '#16a085', '#7f8c8d', '#d35400', '#2c3e50', '#b7950b'];

/** Calls per day per product as stacked bars, inline SVG with a text alternative. */
export function activityChart(points: Array<{ day: number; product: string; calls: number }>, days: number, today: number): Html {
  const firstDay = today - days + 1;
  // Only the days drawn (a record stamped ahead of this instance's clock is not "in the last days").
  points = points.filter((p) => p.day >= firstDay && p.day <= today);
  const products = [...new Set(points.map((p) => p.product))].sort();
  const totals = new Map<number, number>();
  for (const p of points) totals.set(p.day, (totals.get(p.day) ?? 0) + p.calls);
  const max = Math.max(1, ...totals.values());
  const width = 720;
  const height = 140;
  const barWidth = width / days;
  const bars: Html[] = [];
  for (let d = 0; d < days; d += 1) {
    let y = height;
    for (const [i, product] of products.entries()) {
      const calls = points.find((p) => p.day === firstDay + d && p.product === product)?.calls ?? 0;
      if (!calls) continue;
      const h = (calls / max) * (height - 10);
      y -= h;
      bars.push(html`<rect x="${(d * barWidth + 2).toFixed(1)}" y="${y.toFixed(1)}" width="${(barWidth - 4).toFixed(1)}" height="${h.toFixed(1)}" fill="${PALETTE[i % PALETTE.length]}"><title>${new Date((firstDay + d) * 86400000).toISOString().slice(0, 10)}: ${product} ${calls}</title></rect>`);
    }
  }
  const total = points.reduce((sum, p) => sum + p.calls, 0);
  const summary = `${plural(total, 'call')} in the last ${days} days` + (products.length ? `: ${products.map((p) => `${p} ${points.filter((x) => x.product === p).reduce((s, x) => s + x.calls, 0)}`).join(', ')}` : '');
  return html`<figure style="margin:0">
    <svg role="img" aria-label="${summary}" viewBox="0 0 ${width} ${height}" width="100%" height="${height}" preserveAspectRatio="none">${bars}
      <line x1="0" y1="${height - 0.5}" x2="${width}" y2="${height - 0.5}" stroke="#c8cdd3"/></svg>
    <figcaption class="muted">${summary}
      ${products.map((p, i) => html` <span class="badge"><span style="color:${PALETTE[i % PALETTE.length]}">■</span> ${p}</span>`)}</figcaption>
  </figure>`;
}
