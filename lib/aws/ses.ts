import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { config } from '../config.ts';
import { lazyClient } from './clients.ts';

export const ses = /* @__PURE__ */ lazyClient(
  'sesv2',
  ({ region, endpoint }) => new SESv2Client({ region, endpoint }),
  config.mailEndpoint,
);

/** Sends one plain-text mail from the platform's sender address. */
export async function sendTextMail(to: string, mail: { subject: string; text: string }): Promise<void> {
  await ses().send(
    new SendEmailCommand({
      FromEmailAddress: config.mailFrom(),
      Destination: { ToAddresses: [to] },
      Content: { Simple: { Subject: { Data: mail.subject }, Body: { Text: { Data: mail.text } } } },
    }),
  );
}
