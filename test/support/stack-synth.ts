/**
 * Context that synthesizes the whole app without bundling its Lambdas
 * (`aws:cdk:bundling-stacks` names no stack): the template, cdk-nag's checks and
 * the image build contexts are the same, in seconds instead of minutes. The
 * bundles themselves are tested once, in the shared cloud assembly the
 * synthesized mode runs (cdk.out, local-cloud/template/assembly.ts), which `npm test`
 * synthesizes at most once and reuses while the sources are unchanged.
 */
export const withoutBundling = { 'aws:cdk:bundling-stacks': [] as string[] };
