// The keys page: the organization's keys as GET /auth/api-key lists them, with who created each,
// create (the secret shown once), roll with a grace period, revoke after a confirmation; what the
// signed-in member's role cannot do is not offered (member.ts).
import { call } from './api.js';
import { h, replaceChildren, when } from './dom.js';
import { run, showDone, statusArea } from './feedback.js';
import { may, type SignedInMember } from './member.js';
import { scopePicker } from './scope-picker.js';
import { secretPanel } from './secret.js';

type Key = Readonly<{ id: string; prefix: string; name: string | null; scopes: string[]; createdAt: string; expiresAt: string | null; lastUsedAt: string | null; rateLimit: string | null; quota: { requests: number; per: 'day' | 'month' } | null; createdBy?: Creator }>;
/** The member who created a key; `email` null once that member was removed (docs/api.md). */
type Creator = Readonly<{ id: string; email: string | null }>;
type Page = Readonly<{ keys: Key[]; nextCursor: string | null }>;
type Created = Readonly<{ id: string; apiKey: string }>;

/**
 * How long a new key lives. 90 days unless chosen otherwise (issue 46: a key that never expires
 * was the default): a common rotation period (a quarter), long enough that a CI key is not a
 * monthly chore, short enough that a forgotten or leaked-unnoticed key ends by itself; rolling a
 * key (with its grace period) renews it. "Never" stays, chosen on purpose.
 */
const DEFAULT_LIFETIME = '7776000';
const LIFETIMES: readonly (readonly [string, string])[] = [['604800', '7 days'], ['2592000', '30 days'], [DEFAULT_LIFETIME, '90 days'], ['31536000', '365 days'], ['', 'Never']];
const GRACES: readonly (readonly [string, string])[] = [['86400', '24 hours (default)'], ['3600', '1 hour'], ['604800', '7 days'], ['0', 'None: revoke it now']];

const options = (choices: readonly (readonly [string, string])[]) => choices.map(([value, label]) => h('option', { value }, label));

/** Who created the key, as a person reads it: the member's e-mail, "you", or that it was removed. */
function creatorText(creator: Creator | undefined, member: SignedInMember | undefined): string {
  if (creator === undefined) return '—';
  if (creator.email === null) return 'A removed member';
  return creator.id === member?.id ? `${creator.email} (you)` : creator.email;
}

export function keysPage(member: SignedInMember | undefined): HTMLElement {
  const secretSlot = h('div');
  const tableBody = h('tbody');
  const listStatus = statusArea();
  const more = h('button', { type: 'button', hidden: true }, 'Show older keys');
  let cursor: string | null = null;

  async function load(reset: boolean): Promise<void> {
    const page = await run(more, listStatus, () => call<Page>('GET', `/auth/api-key?limit=50${!reset && cursor !== null ? `&cursor=${encodeURIComponent(cursor)}` : ''}`));
    if (page === undefined) return;
    if (reset) tableBody.replaceChildren();
    for (const key of page.keys) tableBody.append(keyRow(key));
    if (reset && page.keys.length === 0) tableBody.append(h('tr', {}, h('td', { colspan: 10 }, 'No keys yet.')));
    cursor = page.nextCursor;
    more.hidden = cursor === null;
  }
  more.addEventListener('click', () => void load(false));

  function reveal(apiKey: string, what: string): void {
    replaceChildren(secretSlot, secretPanel(apiKey, what, () => void load(true)));
  }

  function keyRow(key: Key): HTMLTableRowElement {
    const actions = h('td', { class: 'actions' });
    const rowStatus = statusArea();
    const label = key.name ?? key.prefix;
    // A key the role may not roll or revoke has no buttons (a developer: the keys others created).
    const idle = () => (may.manageKey(member, key.createdBy) ? replaceChildren(actions, rollButton, revokeButton, rowStatus) : replaceChildren(actions, h('span', { class: 'muted' }, 'None for your role')));
    const rollButton = h('button', { type: 'button', 'aria-label': `Roll ${label}`, onclick: () => askRoll() }, 'Roll');
    const revokeButton = h('button', { type: 'button', class: 'danger', 'aria-label': `Revoke ${label}`, onclick: () => askRevoke() }, 'Revoke');

    function askRoll(): void {
      const grace = h('select', { id: `grace-${key.id}` }, ...options(GRACES));
      const confirm = h('button', { type: 'button', 'aria-label': `Confirm roll of ${label}` }, 'Roll now');
      confirm.addEventListener('click', async () => {
        const rolled = await run(confirm, rowStatus, () => call<Created>('POST', `/auth/api-key/${encodeURIComponent(key.id)}/roll`, { graceSeconds: Number(grace.value) }));
        if (rolled !== undefined) reveal(rolled.apiKey, `The successor of ${label}`);
      });
      replaceChildren(actions, h('label', { for: grace.id }, 'The old key keeps working for'), grace, confirm, h('button', { type: 'button', onclick: idle }, 'Cancel'), rowStatus);
      grace.focus();
    }

    function askRevoke(): void {
      const confirm = h('button', { type: 'button', class: 'danger', 'aria-label': `Confirm revoking ${label}` }, 'Yes, revoke');
      confirm.addEventListener('click', async () => {
        const done = await run(confirm, rowStatus, () => call('DELETE', `/auth/api-key/${encodeURIComponent(key.id)}`).then(() => true));
        if (done === true) {
          await load(true);
          showDone(listStatus, `Revoked ${label}: it is refused from now on, everywhere.`);
        }
      });
      replaceChildren(actions, h('span', {}, `Revoke ${label}? Requests with it fail from now on. `), confirm, h('button', { type: 'button', onclick: idle }, 'Cancel'), rowStatus);
      confirm.focus();
    }

    idle();
    return h(
      'tr',
      {},
      h('td', {}, key.name ?? h('span', { class: 'muted' }, '(no name)')),
      h('td', {}, h('code', {}, `${key.prefix}…`)),
      h('td', {}, key.scopes.join(' ')),
      h('td', {}, when(key.createdAt)),
      h('td', {}, key.lastUsedAt === null ? 'Never' : when(key.lastUsedAt)),
      h('td', {}, key.expiresAt === null ? 'Never' : when(key.expiresAt)),
      h('td', {}, key.rateLimit ?? 'Organization’s'),
      h('td', {}, key.quota === null ? 'Organization’s' : `${key.quota.requests}/${key.quota.per}`),
      h('td', {}, creatorText(key.createdBy, member)),
      actions,
    );
  }

  // Create.
  const createStatus = statusArea();
  const name = h('input', { id: 'key-name', name: 'name', maxlength: 100, autocomplete: 'off' });
  const lifetime = h('select', { id: 'key-lifetime' }, ...LIFETIMES.map(([value, label]) => h('option', { value, selected: value === DEFAULT_LIFETIME }, label)));
  const rateLimit = h('input', { id: 'key-rate-limit', placeholder: 'e.g. 100/1m', pattern: '[1-9][0-9]{0,9}/[1-9][0-9]{0,5}[smh]', autocomplete: 'off' });
  // A key's own quota, as `<requests>/<day|month>`: the plan's period, at most the plan's (the gateway says so otherwise).
  const quota = h('input', { id: 'key-quota', placeholder: 'e.g. 1000/day', pattern: '[1-9][0-9]{0,12}/(day|month)', autocomplete: 'off' });
  const scopes = scopePicker();
  const fields = h(
    'fieldset',
    {},
    h('legend', {}, 'Create a key'),
    h('label', { for: name.id }, 'Name (optional)'),
    name,
    scopes.element,
    h('label', { for: lifetime.id }, 'Expires after'),
    lifetime,
    h('label', { for: rateLimit.id }, 'Rate limit (optional; at most the organization’s)'),
    rateLimit,
    h('label', { for: quota.id }, 'Quota (optional; at most the plan’s, per its day or month)'),
    quota,
    h('button', { type: 'submit' }, 'Create key'),
  );
  const form = h('form', { novalidate: true }, fields, createStatus);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const chosen = scopes.choice();
    if (chosen === undefined) return;
    const body = {
      ...(name.value.trim() !== '' && { name: name.value.trim() }),
      // All scopes: no list, so the key also holds the scopes declared later (the API's default).
      ...(!chosen.all && { scopes: chosen.scopes }),
      ...(lifetime.value !== '' && { expiresIn: Number(lifetime.value) }),
      ...(rateLimit.value.trim() !== '' && { rateLimit: rateLimit.value.trim() }),
      ...(quota.value.trim() !== '' && { quota: quotaOf(quota.value.trim()) }),
    };
    const created = await run(fields, createStatus, () => call<Created>('POST', '/auth/api-key', body));
    if (created === undefined) return;
    form.reset();
    scopes.reset();
    reveal(created.apiKey, `New key${body.name !== undefined ? `: ${body.name}` : ''}`);
    await load(true);
  });

  void load(true);
  return h(
    'section',
    { 'aria-labelledby': 'page-title' },
    h('h2', { id: 'page-title', tabindex: -1 }, 'API keys'),
    secretSlot,
    may.createKeys(member) ? form : h('p', { class: 'status notice' }, `Your role (${member?.role ?? ''}) reads the keys; it creates and revokes none.`),
    h(
      'table',
      {},
      h('caption', {}, 'Your organization’s keys, newest first. Secrets are never shown again after creation.'),
      h('thead', {}, h('tr', {}, ...['Name', 'Prefix', 'Scopes', 'Created', 'Last used', 'Expires', 'Rate limit', 'Quota', 'Created by', 'Actions'].map((title) => h('th', { scope: 'col' }, title)))),
      tableBody,
    ),
    listStatus,
    more,
  );
}

/** `1000/day` as the API takes it; anything else is sent as given, for the gateway's 400 to explain. */
function quotaOf(text: string): { requests: number; per: string } | string {
  const match = /^(\d+)\/(day|month)$/.exec(text);
  return match === null ? text : { requests: Number(match[1]), per: match[2]! };
}
