/** Why a resource cannot be applied: a condition reason (CamelCase) and a message for people. */
export interface Refusal {
  readonly ok: false;
  /** The specific condition that failed (`KeyResolved`, `Valid`, `Applied`). */
  readonly condition: 'KeyResolved' | 'Valid' | 'Applied';
  readonly reason: string;
  readonly message: string;
}

export const refuse = (condition: Refusal['condition'], reason: string, message: string): Refusal => ({
  ok: false,
  condition,
  reason,
  message,
});
