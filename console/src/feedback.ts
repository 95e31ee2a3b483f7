// What an action says back, next to the control that started it: the problem's detail, the wait
// of a 429, a Retry button for a 503 or a lost connection.
import { describe, isRetryable } from './api.js';
import { h, replaceChildren } from './dom.js';

/** A live region beside a form or button; empty until an action reports. */
export function statusArea(): HTMLElement {
  return h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
}

export function showError(area: HTMLElement, error: unknown, retry?: () => void): void {
  area.className = 'status error';
  area.setAttribute('role', 'alert');
  replaceChildren(area, h('strong', {}, 'Error: '), describe(error), retry !== undefined && isRetryable(error) ? h('button', { type: 'button', class: 'link', onclick: retry }, 'Retry') : null);
}

export function showDone(area: HTMLElement, text: string): void {
  area.className = 'status done';
  area.setAttribute('role', 'status');
  replaceChildren(area, text);
}

/** Something to tell before any action: why the person is back at sign-in. */
export function showNotice(area: HTMLElement, text: string): void {
  area.className = 'status notice';
  area.setAttribute('role', 'alert');
  replaceChildren(area, text);
}

/** Said instead of a form for something this gateway's operator has not turned on (GET /auth/mfa's `offered`). */
export function notOffered(id: string, what: string): HTMLElement {
  return h('p', { id, class: 'status notice' }, `This gateway does not offer ${what}: ask its operator to turn them on.`);
}

export function clear(area: HTMLElement): void {
  area.className = 'status';
  replaceChildren(area);
}

/**
 * Runs an action for a control: the control is disabled while it runs (no double submits), its
 * outcome goes to the area. Resolves to the action's result, or undefined when it failed.
 */
export async function run<T>(control: HTMLButtonElement | HTMLFieldSetElement, area: HTMLElement, action: () => Promise<T>): Promise<T | undefined> {
  control.disabled = true;
  clear(area);
  try {
    return await action();
  } catch (error) {
    showError(area, error, () => void run(control, area, action));
    return undefined;
  } finally {
    control.disabled = false;
  }
}
