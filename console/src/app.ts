// The console's shell: sign-in until there is a token, then the pages by the URL's fragment
// (#keys, #members, #sessions, #usage, #audit, #organization, #security), with sign-out; an
// invitation link (#invitation=agi_…) opens the page that accepts it. Everything it does is a call
// of the public API (api.ts); the token lives in this page's memory only. Each page is given the
// signed-in member (member.ts) and offers only what its role may do.
import { forgetToken, onSessionEnded, signedIn, signOut } from './api.js';
import { auditPage } from './audit.js';
import { h, replaceChildren } from './dom.js';
import { invitationFromFragment, joinPage } from './join.js';
import { keysPage } from './keys.js';
import { forgetMember, signedInMember, type SignedInMember } from './member.js';
import { membersPage } from './members.js';
import { organizationPage } from './organization.js';
import { securityPage } from './security.js';
import { sessionsPage } from './sessions.js';
import { signInPage } from './sign-in.js';
import { usagePage } from './usage.js';

type Page = Readonly<{ title: string; render: (member: SignedInMember | undefined) => HTMLElement }>;

const PAGES = {
  keys: { title: 'API keys', render: keysPage },
  members: { title: 'Members', render: membersPage },
  sessions: { title: 'Sessions', render: (member) => sessionsPage(() => showSignIn('You signed out this session.'), member) },
  usage: { title: 'Usage', render: usagePage },
  audit: { title: 'Audit trail', render: auditPage },
  organization: { title: 'Organization', render: organizationPage },
  security: { title: 'Security', render: securityPage },
} as const satisfies Record<string, Page>;
type PageName = keyof typeof PAGES;

const main = document.getElementById('main')!;
const nav = document.getElementById('nav')!;
const who = h('p', { id: 'who', class: 'muted' });

function current(): PageName {
  const name = location.hash.replace(/^#/, '');
  // Own names only: `in` also finds what every object inherits (#constructor, #toString), and
  // rendering one of those crashed the console after sign-in.
  return Object.hasOwn(PAGES, name) ? (name as PageName) : 'keys';
}

function showSignIn(message?: string): void {
  forgetToken();
  forgetMember();
  nav.hidden = true;
  document.title = 'Sign in · authgate console';
  replaceChildren(main, signInPage(message, () => show()));
}

/** The invitation's page; the token is taken out of the address bar and this history entry at once. */
function showJoin(token: string): void {
  history.replaceState(null, '', location.pathname + location.search);
  forgetToken();
  forgetMember();
  nav.hidden = true;
  document.title = 'Accept your invitation · authgate console';
  replaceChildren(main, joinPage(token, () => {
    location.hash = 'keys';
  }));
  queueMicrotask(() => (document.getElementById(token === '' ? 'invitation-token' : 'new-password') as HTMLInputElement | null)?.focus());
}

/** Counts the pages shown: a page whose member arrives after another page was asked for is not shown. */
let shown = 0;

async function show(): Promise<void> {
  const invitation = invitationFromFragment();
  if (invitation !== undefined) return showJoin(invitation);
  if (!signedIn()) return showSignIn();
  const name = current();
  const turn = ++shown;
  nav.hidden = false;
  for (const link of nav.querySelectorAll('a')) {
    if (link.getAttribute('href') === `#${name}`) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  document.title = `${PAGES[name].title} · authgate console`;
  const member = await signedInMember();
  if (turn !== shown || !signedIn()) return;
  replaceChildren(who, member === undefined ? '' : `${member.email} · ${member.role}`);
  replaceChildren(main, PAGES[name].render(member));
  // Keyboard and screen-reader users land on the new page's heading.
  (main.querySelector('h2') as HTMLElement | null)?.focus();
}

replaceChildren(
  nav,
  h('ul', {}, ...(Object.keys(PAGES) as PageName[]).map((name) => h('li', {}, h('a', { href: `#${name}` }, PAGES[name].title)))),
  who,
  h('button', {
    type: 'button',
    id: 'sign-out',
    onclick: async () => {
      await signOut().catch(() => {});
      showSignIn('You are signed out.');
    },
  }, 'Sign out'),
);
onSessionEnded((message) => showSignIn(message));
window.addEventListener('hashchange', () => void show());
void show();
