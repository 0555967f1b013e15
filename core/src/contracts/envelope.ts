import { z } from 'zod';

/** Every /api answer: `{ success, message, data }`; a failure may add a stable `code`. */
export interface Envelope<T> {
  success: boolean;
  message: string;
  data?: T;
  code?: string;
}

/** A page of a list: pages count from 1 unless the route says otherwise. */
export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  page_size: number;
}

export const PAGE_SIZE_DEFAULT = 10;
export const PAGE_SIZE_MAX = 100;

/** `p` and `page_size` as the console sends them; bad values fall back to the defaults instead of failing. */
export const pageQuerySchema = z.object({
  p: z.coerce.number().int().min(1).catch(1).default(1),
  page_size: z.coerce
    .number()
    .int()
    .min(1)
    .max(PAGE_SIZE_MAX)
    .catch(PAGE_SIZE_DEFAULT)
    .default(PAGE_SIZE_DEFAULT),
});
export type PageQuery = z.infer<typeof pageQuerySchema>;
