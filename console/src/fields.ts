// Form fields that carry their own message: a refusal about one field (the password policy's
// reason, a wrong current password, an e-mail already taken) is shown right under that field and
// announced with it (aria-describedby, aria-invalid), not only at the bottom of the form.
import { ApiError, describe } from './api.js';
import { h, replaceChildren } from './dom.js';
import { clear, showError } from './feedback.js';

export type Field = Readonly<{
  input: HTMLInputElement;
  /** The label, the input, its hint and its message, in that order. */
  nodes: readonly HTMLElement[];
  showError(text: string): void;
  clearError(): void;
}>;

type FieldOptions = Readonly<{ id: string; label: string; hint?: string; input: Record<string, string | boolean | number> }>;

export function field(options: FieldOptions): Field {
  const hintId = `${options.id}-hint`;
  const errorId = `${options.id}-error`;
  const hint = options.hint === undefined ? undefined : h('p', { id: hintId, class: 'hint' }, options.hint);
  const error = h('p', { id: errorId, class: 'field-error', role: 'alert', hidden: true });
  const describedBy = () => [hint === undefined ? '' : hintId, error.hidden ? '' : errorId].filter((id) => id !== '').join(' ');
  const input = h('input', { id: options.id, ...options.input });
  const update = () => {
    const ids = describedBy();
    if (ids === '') input.removeAttribute('aria-describedby');
    else input.setAttribute('aria-describedby', ids);
  };
  update();
  return {
    input,
    nodes: [h('label', { for: options.id }, options.label), input, ...(hint === undefined ? [] : [hint]), error],
    showError(text) {
      replaceChildren(error, text);
      error.hidden = false;
      input.setAttribute('aria-invalid', 'true');
      update();
    },
    clearError() {
      replaceChildren(error);
      error.hidden = true;
      input.removeAttribute('aria-invalid');
      update();
    },
  };
}

/**
 * A new password's field: `autocomplete="new-password"` so a password manager offers to generate
 * and save one, paste allowed (nothing blocks it: NIST SP 800-63B-4 asks verifiers to allow it),
 * and a "Show" switch so a long passphrase can be checked before it is sent.
 */
export function newPasswordField(id: string, label: string): Field & { toggle: HTMLElement; empty(): void } {
  const base = field({
    id,
    label,
    hint: 'Long is strong: a passphrase of a few unrelated words. No character rules; a common or breached password, or one with your organization’s name or e-mail in it, is refused.',
    input: { type: 'password', name: 'new-password', autocomplete: 'new-password', required: true, spellcheck: 'false' },
  });
  const show = h('input', { type: 'checkbox', id: `${id}-show` });
  show.addEventListener('change', () => {
    base.input.type = show.checked ? 'text' : 'password';
  });
  return {
    ...base,
    toggle: h('label', { class: 'check', for: show.id }, show, ' Show password'),
    /** Emptied and hidden again, after use. */
    empty() {
      base.input.value = '';
      base.input.type = 'password';
      show.checked = false;
    },
  };
}

/** The problem codes of the password policy (400): each reason belongs next to the new password. */
export const POLICY_CODES: ReadonlySet<number> = new Set([1213, 1214, 1215, 1216]);

/** The problem's code when the error is the API's refusal, else undefined. */
export const codeOf = (error: unknown): number | undefined => (error instanceof ApiError ? error.problem.code : undefined);

/** Whether the API refused the call as bad input (400, any code). */
export const isBadInput = (error: unknown): boolean => error instanceof ApiError && error.problem.status === 400;

/**
 * Runs a form's action as feedback.ts's run does (the fieldset disabled meanwhile, no double
 * submit), but a refusal that `place` ties to one field is shown under that field, which gets the
 * focus; any other goes to the form's status area (with a Retry button when retrying may help).
 */
export async function submit<T>(
  control: HTMLFieldSetElement,
  status: HTMLElement,
  fields: readonly Field[],
  place: (error: unknown) => Field | undefined,
  action: () => Promise<T>,
): Promise<T | undefined> {
  control.disabled = true;
  clear(status);
  for (const f of fields) f.clearError();
  try {
    return await action();
  } catch (error) {
    const target = place(error);
    control.disabled = false;
    if (target === undefined) showError(status, error, () => void submit(control, status, fields, place, action));
    else {
      target.showError(describe(error));
      target.input.focus();
    }
    return undefined;
  } finally {
    control.disabled = false;
  }
}
