// The organization page: who the gateway says you are (GET /auth/organization, the gateway's own
// API). Never a forwarded route: those are the operator's routes file's (issue 46), and a gateway
// in front of another API has no /organization/me.
import { call } from './api.js';
import { h, replaceChildren, when } from './dom.js';
import { run, statusArea } from './feedback.js';

/** As GET /auth/organization answers. */
type Organization = Readonly<{ id: string; name: string; email: string; createdAt: string }>;

export function organizationPage(): HTMLElement {
  const list = h('dl');
  const status = statusArea();
  const reload = h('button', { type: 'button' }, 'Reload');
  async function load(): Promise<void> {
    const org = await run(reload, status, () => call<Organization>('GET', '/auth/organization'));
    if (org === undefined) return;
    replaceChildren(
      list,
      ...[
        ['Organization id', org.id],
        ['Name', org.name],
        ['E-mail', org.email],
        ['Created', when(org.createdAt)],
      ].flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]),
    );
  }
  reload.addEventListener('click', () => void load());
  void load();
  return h(
    'section',
    { 'aria-labelledby': 'page-title' },
    h('h2', { id: 'page-title', tabindex: -1 }, 'Organization'),
    h(
      'p',
      {},
      'As the gateway holds it (GET /auth/organization). Every request it forwards tells your service the same: the id in x-organization-id, and, unless the operator turned it off, the id, name and e-mail in the signed x-authgate-identity.',
    ),
    list,
    status,
    reload,
  );
}
