import type { PayForm } from './api/wallet.ts';

/**
 * Opens an empty window for the payment site while the click still counts as a user gesture (a window opened
 * after the pay call returns would be blocked as a pop-up). Answers null when the browser refused it.
 */
export function openPaymentWindow(waitingText: string): Window | null {
  const popup = window.open('', '_blank');
  if (!popup) return null;
  try {
    // the payment site must not be able to navigate the console
    popup.opener = null;
    popup.document.title = waitingText;
    popup.document.body.textContent = waitingText;
  } catch {
    // a window we cannot write to is closed again; the caller pays in this tab
    popup.close();
    return null;
  }
  return popup;
}

/**
 * Posts the signed fields to the payment site through a hidden form: inside `popup` when there is one
 * (a blank window of our origin), otherwise in this tab.
 */
export function submitPayForm({ url, params }: PayForm, popup: Window | null): void {
  const doc = popup && !popup.closed ? popup.document : document;
  const form = doc.createElement('form');
  form.method = 'POST';
  form.action = url;
  form.style.display = 'none';
  for (const [name, value] of Object.entries(params)) {
    const input = doc.createElement('input');
    input.type = 'hidden';
    input.name = name;
    input.value = value;
    form.append(input);
  }
  doc.body.append(form);
  form.submit();
}
