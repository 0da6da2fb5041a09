/**
 * The one error catalogue. Every error the API answers with is an entry of one
 * of the area files under lib/errors/catalogue/: a stable `code`, its HTTP
 * status and its default sentence. Codes the spec names are written exactly as
 * the spec writes them; the others are ours and documented in docs/api-errors.md.
 *
 * One export per entry, so that a handler's bundle holds the sentences it can
 * answer and not the whole catalogue (it was 15 KB of every API bundle). Code
 * imports the entries it answers from their area's file; this module gathers
 * them all for lib/errors/all.ts, and a code exported by two areas fails the
 * type check here.
 */
export * from './catalogue/accounts.ts';
export * from './catalogue/admin.ts';
export * from './catalogue/builds.ts';
export * from './catalogue/domains.ts';
export * from './catalogue/functions.ts';
export * from './catalogue/request.ts';
export * from './catalogue/sites.ts';
