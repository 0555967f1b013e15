import { createFileRoute } from '@tanstack/react-router';
import { PersonalPage } from '../../features/personal/components/personal-page.tsx';

export const Route = createFileRoute('/_console/personal')({
  component: PersonalPage,
});
