// The one place a secret is written to the page: a new key, shown once with a copy button and a
// warning, and removed from the page (value and element) when its owner is done.
import { h } from './dom.js';

export function secretPanel(apiKey: string, what: string, onDone: () => void): HTMLElement {
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
        copied.textContent = 'Select the key and copy it (Ctrl+C).';
      }
    },
  }, 'Copy');
  const panel = h(
    'section',
    { class: 'secret-panel', 'aria-labelledby': 'secret-title' },
    h('h3', { id: 'secret-title' }, what),
    h('p', { id: 'secret-warning', class: 'warning' }, h('strong', {}, 'Copy this key now. '), 'It is shown only this once: the gateway keeps only its hash and cannot show it again.'),
    h('label', { for: 'secret' }, 'API key'),
    field,
    h('div', { class: 'row' }, copy, copied),
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
