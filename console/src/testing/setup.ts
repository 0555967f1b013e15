import { cleanup } from '@testing-library/react';
import i18next from 'i18next';
import { afterEach } from 'vitest';
import '../i18n.ts';

// jsdom has no scrolling; the router restores scroll positions on navigation
window.scrollTo = () => {};

// Component tests read the English texts; the product default stays Chinese.
await i18next.changeLanguage('en');

afterEach(() => {
  cleanup();
  localStorage.clear();
});
