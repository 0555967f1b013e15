/** A refusal shown under a form (a wrong code, a cancelled passkey), read out by screen readers. */
export function AlertText({ text }: { text: string | null }) {
  if (!text) return null;
  return (
    <p role="alert" className="text-sm text-red-600 dark:text-red-400">
      {text}
    </p>
  );
}
