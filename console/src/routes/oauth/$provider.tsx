import { createFileRoute } from '@tanstack/react-router';
import { OAuthCallback } from '../../features/auth/components/oauth-callback.tsx';

/**
 * OAuth callbacks (/oauth/github, /oauth/oidc, /oauth/linuxdo). The code and state are read from the address
 * as written: the router's search parsing would turn a code such as `1e5` into a number.
 */
export const Route = createFileRoute('/oauth/$provider')({
  component: function OAuthCallbackRoute() {
    const { provider } = Route.useParams();
    const query = new URLSearchParams(window.location.search);
    return (
      <OAuthCallback
        provider={provider}
        code={query.get('code') || undefined}
        state={query.get('state') || undefined}
      />
    );
  },
});
