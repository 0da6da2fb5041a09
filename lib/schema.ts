/**
 * The request schemas' zod: zod/mini, whose functions tree-shake (classic
 * zod's methods put ~85 KB in every bundle that declares a schema). Mini loads
 * no locale, so this module sets the English messages classic zod gives, which
 * `details.fields[].message` of a VALIDATION_FAILED reply shows. Only bundles
 * that declare a schema import it.
 */
import { config } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

config(en());

export * from 'zod/mini';
