import { createFileRoute } from '@tanstack/react-router';
import { ResetRequestForm } from '../features/auth/components/reset-request-form.tsx';

export const Route = createFileRoute('/reset')({ component: ResetRequestForm });
