// The sessions page: the organization's live logins (GET /auth/sessions), end one, end all others
// (an owner or admin: member.ts).
import { ApiError, call } from './api.js';
import { h, replaceChildren, when } from './dom.js';
import { run, showDone, statusArea } from './feedback.js';
import { may, type SignedInMember } from './member.js';

type Session = Readonly<{ id: string; createdAt: string | null; expiresAt: string; client: string | null; current: boolean }>;

export function sessionsPage(onOwnSessionEnded: () => void, member?: SignedInMember): HTMLElement {
  const manages = may.manageSessions(member);
  const body = h('tbody');
  const status = statusArea();
  const endOthers = h('button', { type: 'button' }, 'End all other sessions');

  async function load(): Promise<Session[] | undefined> {
    const answer = await run(endOthers, status, () => call<{ sessions: Session[] }>('GET', '/auth/sessions'));
    if (answer === undefined) return undefined;
    replaceChildren(body, ...answer.sessions.map(row));
    endOthers.disabled = answer.sessions.every((s) => s.current);
    return answer.sessions;
  }

  function row(session: Session): HTMLTableRowElement {
    const end = h('button', { type: 'button', class: 'danger', 'aria-label': `End session ${session.client ?? session.id}` }, session.current ? 'Sign out here' : 'End');
    const rowStatus = statusArea();
    end.addEventListener('click', async () => {
      const done = await run(end, rowStatus, () => call('DELETE', `/auth/sessions/${encodeURIComponent(session.id)}`).then(() => true));
      if (done !== true) return;
      if (session.current) onOwnSessionEnded();
      else {
        await load();
        showDone(status, 'Session ended: its token is refused from now on.');
      }
    });
    return h(
      'tr',
      {},
      h('td', {}, session.client ?? 'Unknown client', session.current ? h('strong', {}, ' (this session)') : null),
      h('td', {}, when(session.createdAt)),
      h('td', {}, when(session.expiresAt)),
      h('td', {}, manages ? end : h('span', { class: 'muted' }, 'None for your role'), rowStatus),
    );
  }

  endOthers.addEventListener('click', async () => {
    const sessions = await load();
    if (sessions === undefined) return;
    const others = sessions.filter((s) => !s.current);
    const ended = await run(endOthers, status, async () => {
      for (const session of others) await call('DELETE', `/auth/sessions/${encodeURIComponent(session.id)}`).catch((error: unknown) => {
        // Ended meanwhile (404) is what was asked for.
        if (!(error instanceof ApiError && error.problem.status === 404)) throw error;
      });
      return others.length;
    });
    if (ended === undefined) return;
    await load();
    showDone(status, `Ended ${ended} other session${ended === 1 ? '' : 's'}.`);
  });

  void load();
  return h(
    'section',
    { 'aria-labelledby': 'page-title' },
    h('h2', { id: 'page-title', tabindex: -1 }, 'Sessions'),
    h('p', {}, 'Every sign-in of your organization that has not ended. API keys are not sessions: they stay.'),
    h('table', {}, h('caption', {}, 'Live sessions, the latest sign-in first'), h('thead', {}, h('tr', {}, ...['Client', 'Signed in', 'Expires', 'Action'].map((t) => h('th', { scope: 'col' }, t)))), body),
    manages ? endOthers : h('p', { class: 'status notice' }, `Your role (${member?.role ?? ''}) reads the sessions; only an owner or admin ends them. Sign out ends your own.`),
    status,
  );
}
