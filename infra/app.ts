import { buildSlipwayApp } from './stack.ts';

/** `cdk synth` / `cdk deploy` entry (cdk.json runs it with tsx). */
buildSlipwayApp().app.synth();
