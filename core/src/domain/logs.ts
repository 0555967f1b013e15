export { LogType } from './closed-sets.ts';
