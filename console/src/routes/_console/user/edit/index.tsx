import { createFileRoute } from '@tanstack/react-router';
import { SelfEditPage } from '../../../../features/personal/components/self-edit-page.tsx';

/** /user/edit: the signed-in user edits their own username, display name and password. */
export const Route = createFileRoute('/_console/user/edit/')({ component: SelfEditPage });
