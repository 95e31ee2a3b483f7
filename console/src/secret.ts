// The one place a secret is written to the page: a new key or an invitation token, shown once with
// a copy button and a warning, and removed from the page (value and element) when its owner is done.
import { h } from './dom.js';

/** What the secret is called, and what the warning adds (an API key unless said otherwise). */
export type SecretKind = Readonly<{ label: string; name: string; warning: string }>;

const API_KEY: SecretKind = { label: 'API key', name: 'key', warning: 'It is shown only this once: the gateway keeps only its hash and cannot show it again.' };

export function secretPanel(apiKey: string, what: string, onDone: () => void, kind: SecretKind = API_KEY, ...extra: Node[]): HTMLElement {
  const field = h('input', { id: 'secret', type: 'text', readonly: true, class: 'secret', 'aria-describedby': 'secret-warning', autocomplete: 'off', spellcheck: 'false' });
  field.value = apiKey;
  const copied = h('span', { class: 'status', role: 'status', 'aria-live': 'polite' });
  const copy = h('button', {
    type: 'button',
    onclick: async () => {
      field.select();
      try {
        await navigator.clipboard.writeText(field.value);
        copied.textContent = 'Copied.';
      } catch {
        copied.textContent = `Select the ${kind.name} and copy it (Ctrl+C).`;
      }
    },
  }, 'Copy');
  const panel = h(
    'section',
    { class: 'secret-panel', 'aria-labelledby': 'secret-title' },
    h('h3', { id: 'secret-title' }, what),
    h('p', { id: 'secret-warning', class: 'warning' }, h('strong', {}, `Copy this ${kind.name} now. `), kind.warning),
    h('label', { for: 'secret' }, kind.label),
    field,
    h('div', { class: 'row' }, copy, copied),
    ...extra,
    h('button', {
      type: 'button',
      onclick: () => {
        field.value = '';
        panel.remove();
        onDone();
      },
    }, 'I have copied it'),
  );
  queueMicrotask(() => field.focus());
  return panel;
}
