import i18next from 'i18next';
import { initReactI18next } from 'react-i18next';
import enCommon from './locales/en/common.json';
import zhCommon from './locales/zh/common.json';

/** Chinese is the default language; the choice is kept in local storage under i18nextLng. */
const stored = typeof localStorage === 'undefined' ? null : localStorage.getItem('i18nextLng');

void i18next.use(initReactI18next).init({
  resources: { zh: { common: zhCommon }, en: { common: enCommon } },
  lng: stored === 'en' ? 'en' : 'zh',
  fallbackLng: 'zh',
  defaultNS: 'common',
  // keys are flat ("nav.home"), not nested objects
  keySeparator: false,
  interpolation: { escapeValue: false },
});

i18next.on('languageChanged', (lng) => {
  localStorage.setItem('i18nextLng', lng);
  document.documentElement.lang = lng;
});

export default i18next;
