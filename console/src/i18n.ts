import i18next from 'i18next';
import { initReactI18next } from 'react-i18next';

type Strings = Record<string, string>;

/**
 * Every file `locales/<language>/<namespace>.json` is one namespace of one language; a feature adds its strings
 * by adding a file, with no edit here.
 */
const files = import.meta.glob<Strings>('./locales/*/*.json', { eager: true, import: 'default' });
const resources: Record<string, Record<string, Strings>> = {};
for (const [path, strings] of Object.entries(files)) {
  const [, language = '', namespace = ''] = /\.\/locales\/([^/]+)\/([^/]+)\.json$/.exec(path) ?? [];
  resources[language] = { ...resources[language], [namespace]: strings };
}

/** Chinese is the default language; the choice is kept in local storage under i18nextLng. */
const stored = typeof localStorage === 'undefined' ? null : localStorage.getItem('i18nextLng');

const language = stored === 'en' ? 'en' : 'zh';

void i18next.use(initReactI18next).init({
  resources,
  lng: language,
  fallbackLng: 'zh',
  defaultNS: 'common',
  // keys are flat ("nav.home"), not nested objects
  keySeparator: false,
  interpolation: { escapeValue: false },
});

if (typeof document !== 'undefined') document.documentElement.lang = language;

i18next.on('languageChanged', (lng) => {
  localStorage.setItem('i18nextLng', lng);
  document.documentElement.lang = lng;
});

export default i18next;
