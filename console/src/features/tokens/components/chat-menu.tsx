import { Menu, MenuButton, MenuItem, MenuItems } from '@headlessui/react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../../components/ui/index.ts';
import { toast } from '../../../lib/toast.ts';
import { serverAddress as addressOf, type ChatLink, fillChatLink } from '../../chat/links.ts';

const itemClass =
  'block w-full rounded px-3 py-1.5 text-left text-sm data-focus:bg-gray-100 dark:data-focus:bg-gray-800';

/**
 * The chat front-ends of the Chats option, each opened in a new tab with this token filled in. `links` is null when
 * the configuration is broken; with no links the button says whom to ask.
 */
export function ChatMenu({
  tokenName,
  tokenKey,
  links,
  serverAddress,
}: {
  tokenName: string;
  tokenKey: string;
  links: ChatLink[] | null;
  serverAddress: string;
}) {
  const { t } = useTranslation('tokens');
  const label = t('chat.openOf', { name: tokenName });
  if (!links || links.length === 0) {
    return (
      <Button
        size="sm"
        variant="secondary"
        aria-label={label}
        onClick={() => toast.warning(links ? t('chat.none') : t('chat.broken'))}
      >
        {t('chat.open')}
      </Button>
    );
  }
  const origin = typeof window === 'undefined' ? '' : window.location.origin;
  return (
    <Menu as="div" className="relative">
      <MenuButton
        aria-label={label}
        className="inline-flex items-center gap-1 rounded-md border border-gray-300 bg-white px-2.5 py-1 text-sm font-medium text-gray-800 hover:bg-gray-50 dark:border-gray-600 dark:bg-gray-800 dark:text-gray-100 dark:hover:bg-gray-700"
      >
        {t('chat.open')} ▾
      </MenuButton>
      <MenuItems
        anchor="bottom end"
        className="z-50 mt-1 min-w-40 rounded-md border border-gray-200 bg-white p-1 shadow-lg dark:border-gray-700 dark:bg-gray-900"
      >
        {links.map((link) => (
          <MenuItem key={link.name}>
            <a
              href={fillChatLink(link.template, tokenKey, addressOf(serverAddress, origin))}
              target="_blank"
              rel="noopener noreferrer"
              className={itemClass}
            >
              {link.name}
            </a>
          </MenuItem>
        ))}
      </MenuItems>
    </Menu>
  );
}
