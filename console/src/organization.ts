// The organization page: who the gateway says you are, as your upstream hears it (GET /organization/me).
import { call } from './api.js';
import { h, replaceChildren } from './dom.js';
import { run, statusArea } from './feedback.js';

export function organizationPage(): HTMLElement {
  const list = h('dl');
  const status = statusArea();
  const reload = h('button', { type: 'button' }, 'Reload');
  async function load(): Promise<void> {
    const org = await run(reload, status, () => call<Record<string, unknown>>('GET', '/organization/me'));
    if (org === undefined) return;
    const shown = (['id', 'name', 'email'] as const).filter((field) => typeof org[field] === 'string');
    replaceChildren(list, ...shown.flatMap((field) => [h('dt', {}, field === 'id' ? 'Organization id' : field === 'name' ? 'Name' : 'E-mail'), h('dd', {}, String(org[field]))]));
  }
  reload.addEventListener('click', () => void load());
  void load();
  return h(
    'section',
    { 'aria-labelledby': 'page-title' },
    h('h2', { id: 'page-title', tabindex: -1 }, 'Organization'),
    h('p', {}, 'As the service behind the gateway receives it (GET /organization/me).'),
    list,
    status,
    reload,
  );
}
