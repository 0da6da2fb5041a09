import * as z from '../schema.ts';

/**
 * The API's numbered pages (spec: `page` from 1, `page_size` 1 to 100, default 20), as the admin
 * abuse-scans listing and a project's deployments listing take them. Query values arrive as
 * strings: the patterns bound them before they are numbers.
 */
export const PAGE_SIZE_DEFAULT = 20;

export const pageQueryFields = {
  page: z.optional(z.string().check(z.regex(/^[1-9][0-9]{0,5}$/, 'page must be an integer from 1 to 999999'))),
  page_size: z.optional(z.string().check(z.regex(/^(?:100|[1-9][0-9]?)$/, 'page_size must be an integer from 1 to 100'))),
};

export function pageOf(query: { page?: string; page_size?: string }): { page: number; pageSize: number } {
  return { page: query.page ? Number(query.page) : 1, pageSize: query.page_size ? Number(query.page_size) : PAGE_SIZE_DEFAULT };
}
