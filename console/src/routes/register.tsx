import { createFileRoute } from '@tanstack/react-router';
import { RegisterForm } from '../features/auth/components/register-form.tsx';
import { StorageKey, writeStored } from '../lib/storage.ts';

/** /register?aff=CODE keeps the invite code locally; it is sent as aff_code on registration. */
export const Route = createFileRoute('/register')({
  validateSearch: (search: Record<string, unknown>): { aff?: string } =>
    typeof search.aff === 'string' && search.aff ? { aff: search.aff } : {},
  beforeLoad: ({ search }) => {
    if (search.aff) writeStored(StorageKey.AffCode, search.aff);
  },
  component: RegisterForm,
});
