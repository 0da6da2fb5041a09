import { invocationView } from '../../../lib/functions/invocation-views.ts';
import { pollTarget } from '../../../lib/functions/queued-door.ts';
import { FunctionTelemetry } from '../../../lib/functions/telemetry.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

const telemetry = new FunctionTelemetry();

export const handler = defineHandler('GET /api/v1/public/functions/{subdomain}/{name}/invocations/{id}', {}, async (ctx) => {
  try {
    const record = await pollTarget({
      subdomain: ctx.params.subdomain!,
      name: ctx.params.name!,
      id: ctx.params.id!,
      sourceIp: ctx.sourceIp,
      telemetry,
    });
    // The public view: never the console output.
    return { data: await invocationView(record) };
  } finally {
    await telemetry.flush();
  }
});
