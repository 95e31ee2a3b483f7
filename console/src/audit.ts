// The audit page: the organization's security events (GET /auth/audit), newest first, a page at a time.
import { call } from './api.js';
import { h, when } from './dom.js';
import { run, statusArea } from './feedback.js';

type Event = Readonly<{ id: string; type: string; at: string; actor: string; credential: { kind: string; id: string } | null; network: string | null; details: Record<string, unknown> }>;

const PAGE = 25;

export function auditPage(): HTMLElement {
  const body = h('tbody');
  const status = statusArea();
  const older = h('button', { type: 'button', hidden: true }, 'Show older events');
  let cursor: string | null = null;

  async function load(): Promise<void> {
    const page = await run(older, status, () => call<{ events: Event[]; nextCursor: string | null }>('GET', `/auth/audit?limit=${PAGE}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`));
    if (page === undefined) return;
    for (const event of page.events) body.append(row(event));
    if (body.childElementCount === 0) body.append(h('tr', {}, h('td', { colspan: 5 }, 'No events yet.')));
    cursor = page.nextCursor;
    older.hidden = cursor === null;
  }
  older.addEventListener('click', () => void load());

  const row = (event: Event) =>
    h(
      'tr',
      {},
      h('td', {}, when(event.at)),
      h('td', {}, h('code', {}, event.type)),
      h('td', {}, event.actor, event.credential === null ? null : ` (${event.credential.kind === 'api_key' ? 'API key' : 'session'} ${event.credential.id})`),
      h('td', {}, event.network ?? '—'),
      h('td', { class: 'details' }, Object.entries(event.details).map(([name, value]) => `${name}: ${Array.isArray(value) ? value.join(' ') : String(value)}`).join(', ') || '—'),
    );

  void load();
  return h(
    'section',
    { 'aria-labelledby': 'page-title' },
    h('h2', { id: 'page-title', tabindex: -1 }, 'Audit trail'),
    h('table', {}, h('caption', {}, 'Security events of your organization, newest first'), h('thead', {}, h('tr', {}, ...['When', 'Event', 'Actor', 'Network', 'Details'].map((t) => h('th', { scope: 'col' }, t)))), body),
    status,
    older,
  );
}
