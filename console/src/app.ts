// The console's shell: sign-in until there is a token, then the pages by the URL's fragment
// (#keys, #sessions, #usage, #audit, #organization, #security), with sign-out. Everything it does is a call of the
// public API (api.ts); the token lives in this page's memory only.
import { forgetToken, onSessionEnded, signedIn, signOut } from './api.js';
import { auditPage } from './audit.js';
import { h, replaceChildren } from './dom.js';
import { keysPage } from './keys.js';
import { organizationPage } from './organization.js';
import { securityPage } from './security.js';
import { sessionsPage } from './sessions.js';
import { signInPage } from './sign-in.js';
import { usagePage } from './usage.js';

const PAGES = {
  keys: { title: 'API keys', render: keysPage },
  sessions: { title: 'Sessions', render: () => sessionsPage(() => showSignIn('You signed out this session.')) },
  usage: { title: 'Usage', render: usagePage },
  audit: { title: 'Audit trail', render: auditPage },
  organization: { title: 'Organization', render: organizationPage },
  security: { title: 'Security', render: securityPage },
} as const;
type PageName = keyof typeof PAGES;

const main = document.getElementById('main')!;
const nav = document.getElementById('nav')!;

function current(): PageName {
  const name = location.hash.replace(/^#/, '');
  // Own names only: `in` also finds what every object inherits (#constructor, #toString), and
  // rendering one of those crashed the console after sign-in.
  return Object.hasOwn(PAGES, name) ? (name as PageName) : 'keys';
}

function showSignIn(message?: string): void {
  forgetToken();
  nav.hidden = true;
  document.title = 'Sign in · authgate console';
  replaceChildren(main, signInPage(message, () => show()));
}

function show(): void {
  if (!signedIn()) return showSignIn();
  const name = current();
  nav.hidden = false;
  for (const link of nav.querySelectorAll('a')) {
    if (link.getAttribute('href') === `#${name}`) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  document.title = `${PAGES[name].title} · authgate console`;
  replaceChildren(main, PAGES[name].render());
  // Keyboard and screen-reader users land on the new page's heading.
  (main.querySelector('h2') as HTMLElement | null)?.focus();
}

replaceChildren(
  nav,
  h('ul', {}, ...(Object.keys(PAGES) as PageName[]).map((name) => h('li', {}, h('a', { href: `#${name}` }, PAGES[name].title)))),
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
window.addEventListener('hashchange', () => show());
show();
