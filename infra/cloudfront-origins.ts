import type * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import { Construct } from 'constructs';

/** CloudFormation's names that are not the camelCase name with its first letter raised. */
const ACRONYM_KEYS: Record<string, string> = { OriginSslProtocols: 'OriginSSLProtocols', HttpPort: 'HTTPPort', HttpsPort: 'HTTPSPort' };

/** A CDK-rendered (camelCase) CloudFront property as CloudFormation spells it; tokens are strings and pass as they are. */
function cloudFormationOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(cloudFormationOf);
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([key, v]) => {
        const name = key[0]!.toUpperCase() + key.slice(1);
        return [ACRONYM_KEYS[name] ?? name, cloudFormationOf(v)];
      }),
  );
}

/**
 * An origin as a distribution's Origins list takes it, for an origin only a viewer function selects
 * (`cf.selectRequestOriginById`): CDK renders only the origins a behavior uses, so such an origin is added to the
 * rendered list with a property override.
 */
export function renderedOrigin(scope: Construct, id: string, origin: cloudfront.IOrigin, originId: string): object {
  return cloudFormationOf(origin.bind(new Construct(scope, id), { originId }).originProperty!) as object;
}
