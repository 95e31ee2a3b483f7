// The key form's scopes: what the gateway offers now (GET /auth/scopes, read again each time the
// page is shown), none ticked until the person chooses (issue 46: a key holding every scope by
// default is the broadest credential made by a click). "All scopes" is a choice of its own,
// labelled for what it means: the key is given no list, so it also holds scopes declared later.
import { call } from './api.js';
import { h, replaceChildren } from './dom.js';
import { run, statusArea } from './feedback.js';

/** The scopes a key may hold, as GET /auth/scopes lists them: the route table's, in its order. */
type Scopes = Readonly<{ scopes: ReadonlyArray<Readonly<{ name: string; description: string }>> }>;

/** What the picker says the key is to hold: every scope (no list sent), or these. */
export type ScopeChoice = Readonly<{ all: true } | { all: false; scopes: readonly string[] }>;

export type ScopePicker = Readonly<{
  element: HTMLFieldSetElement;
  /** The choice, or undefined (and the reason shown under the picker) when nothing is chosen. */
  choice(): ScopeChoice | undefined;
  /** Back to nothing chosen, after a key is made. */
  reset(): void;
}>;

export function scopePicker(): ScopePicker {
  let boxes: HTMLInputElement[] = [];
  const all = h('input', { type: 'checkbox', id: 'scope-all', value: 'all' });
  const hint = h('p', { id: 'scopes-hint', class: 'hint' }, 'Tick only what this key needs; nothing is ticked for you.');
  const error = h('p', { id: 'scopes-error', class: 'field-error', role: 'alert', hidden: true });
  const status = statusArea();
  const element = h('fieldset', { class: 'scopes', 'aria-describedby': 'scopes-hint' }, h('legend', {}, 'Scopes'), hint, status);
  const showError = (text: string | undefined) => {
    replaceChildren(error, text ?? '');
    error.hidden = text === undefined;
    element.setAttribute('aria-describedby', text === undefined ? 'scopes-hint' : 'scopes-hint scopes-error');
  };
  // "All scopes" stands for every box, now and later: the boxes are ticked and locked with it.
  all.addEventListener('change', () => {
    for (const box of boxes) {
      box.checked = all.checked;
      box.disabled = all.checked;
    }
    showError(undefined);
  });

  async function load(): Promise<void> {
    const declared = await run(element, status, () => call<Scopes>('GET', '/auth/scopes'));
    if (declared === undefined) return;
    boxes = declared.scopes.map((scope) => h('input', { type: 'checkbox', id: `scope-${scope.name}`, value: scope.name }));
    for (const box of boxes) box.addEventListener('change', () => showError(undefined));
    const labels = boxes.map((box, i) => h('label', { class: 'check', title: declared.scopes[i]!.description }, box, ` ${box.value}`));
    element.replaceChildren(
      h('legend', {}, 'Scopes'),
      hint,
      h('label', { class: 'check all' }, all, ' All scopes, including any declared later (full access)'),
      ...labels,
      error,
      status,
    );
  }
  void load();

  return {
    element,
    choice() {
      if (all.checked) return { all: true };
      const scopes = boxes.filter((box) => box.checked).map((box) => box.value);
      if (scopes.length > 0) return { all: false, scopes };
      showError('Choose the scopes this key needs (or All scopes).');
      (boxes[0] ?? all).focus();
      return undefined;
    },
    reset() {
      all.checked = false;
      for (const box of boxes) {
        box.checked = false;
        box.disabled = false;
      }
      showError(undefined);
    },
  };
}
