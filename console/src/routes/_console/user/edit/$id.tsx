import { createFileRoute } from '@tanstack/react-router';
import { UsersPage } from '../../../../features/users/components/users-page.tsx';
import { requireUser } from '../../../../lib/guards.ts';
import { Role } from '../../../../lib/session.ts';

/** /user/edit/{id}: the user list with that user's edit sheet open; closing it returns to /user. */
export const Route = createFileRoute('/_console/user/edit/$id')({
  beforeLoad: () => ({ user: requireUser(Role.Admin) }),
  component: function EditUserRoute() {
    const { id } = Route.useParams();
    const navigate = Route.useNavigate();
    const userId = Number(id);
    return (
      <UsersPage
        key={id}
        {...(Number.isInteger(userId) && userId > 0 ? { editId: userId } : {})}
        onEditClosed={() => void navigate({ to: '/user' })}
      />
    );
  },
});
