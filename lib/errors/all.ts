import type { ErrorEntry } from './api-error.ts';
import * as catalogue from './catalogue.ts';

/**
 * Every entry of the catalogue by its code, for what lists them all (docs/api-errors.md, the OpenAPI
 * document, tests). A handler imports the entries it answers from their area's file (catalogue/<area>.ts)
 * instead: this module would bring the whole catalogue into its bundle.
 */
export const errorCatalogue: Readonly<Record<ErrorCode, ErrorEntry>> = catalogue;

export type ErrorCode = keyof typeof catalogue;
