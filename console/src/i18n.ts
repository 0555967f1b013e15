import i18next, { type BackendModule } from 'i18next';
import { initReactI18next } from 'react-i18next';

type Strings = Record<string, string>;

/**
 * Every file `locales/<language>/<namespace>.json` is one namespace of one language; a feature adds its strings
 * by adding a file, with no edit here. The files are loaded when their language is first used, not bundled into
 * the first download: a visitor reads one language, and every namespace of both would be most of the budget.
 */
const files = import.meta.glob<Strings>('./locales/*/*.json', { import: 'default' });
const pathOf = (language: string, namespace: string) => `./locales/${language}/${namespace}.json`;
const namespaces = [
  ...new Set(Object.keys(files).map((path) => /\/([^/]+)\.json$/.exec(path)?.[1] ?? '')),
].filter((namespace) => namespace !== '');

const localeFiles: BackendModule = {
  type: 'backend',
  init() {},
  read(language, namespace, done) {
    const load = files[pathOf(language, namespace)];
    if (load === undefined) {
      done(null, {});
      return;
    }
    load().then(
      (strings) => done(null, strings),
      (error: unknown) => done(error instanceof Error ? error.message : String(error), false),
    );
  },
};

/** Chinese is the default language; the choice is kept in local storage under i18nextLng. */
const stored = typeof localStorage === 'undefined' ? null : localStorage.getItem('i18nextLng');

const language = stored === 'en' ? 'en' : 'zh';

/** Resolves once the chosen language's strings are loaded: the console renders after it. */
export const i18nReady = i18next
  .use(localeFiles)
  .use(initReactI18next)
  .init({
    lng: language,
    // Every key exists in both languages (locales.test.ts), so only the language in use is loaded.
    fallbackLng: false,
    load: 'currentOnly',
    ns: namespaces,
    defaultNS: 'common',
    // keys are flat ("nav.home"), not nested objects
    keySeparator: false,
    interpolation: { escapeValue: false },
    // The first render waits for i18nReady; a language switch keeps the old texts until the new ones arrive.
    react: { useSuspense: false },
  });

if (typeof document !== 'undefined') document.documentElement.lang = language;

i18next.on('languageChanged', (lng) => {
  localStorage.setItem('i18nextLng', lng);
  document.documentElement.lang = lng;
});
