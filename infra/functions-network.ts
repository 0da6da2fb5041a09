import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { readCapacitySettings } from './context.ts';

/**
 * Address ranges user code must never reach (spec, Limits: "port 80, private
 * ranges and the cloud metadata address are blocked"): RFC 1918, carrier-grade
 * NAT, link-local (the metadata addresses). The VPC is IPv4-only, so there is
 * no IPv6 route to deny.
 */
export const blockedEgressRanges = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '169.254.0.0/16'] as const;

/**
 * The subnets of user code (user-function Lambdas, invocation tasks, builds). Named, not chosen by type: the Door
 * group is PRIVATE_WITH_EGRESS too, and a selection by type would take both.
 */
export const computeSubnets: ec2.SubnetSelection = { subnetGroupName: 'Compute' };
/** The functions VPC's address range (fixed, so security group rules name it as a literal). */
export const functionsVpcCidr = '10.40.0.0/16';
/** The subnet group of the container door (its tasks and internal load balancer). */
export const doorSubnetGroup = 'Door';

/** The NAT instance of the default shape: the smallest Graviton instance, about $3 a month. */
export const natInstanceType = 't4g.nano';

/**
 * The network of user code: its VPC (flow logs of rejects), a group that allows HTTPS out only, an ACL that denies
 * private ranges. The private subnets reach the internet through one NAT instance by default (`natGateways` 0): a
 * NAT gateway costs $32.85 a month plus its address, the instance about $3.70 with its disk. It is one point of
 * failure for the functions' egress and the door's AWS calls; EC2's simplified automatic recovery (on by default
 * for t4g) restarts it on other hardware with the same id, address and routes. `natGateways` 1 or 2 puts managed
 * NAT gateways in its place.
 */
export function userCodeNetwork(scope: Construct) {
  const { natGateways } = readCapacitySettings(scope);
  // No traffic allowed by the provider's own group (it would take every port from anywhere): the rules are added below.
  const natInstances =
    natGateways === 0
      ? ec2.NatProvider.instanceV2({
          instanceType: new ec2.InstanceType(natInstanceType),
          defaultAllowedTraffic: ec2.NatTrafficDirection.NONE,
          associatePublicIpAddress: true,
        })
      : undefined;
  // --- The network of user code -------------------------------------------------------------
  const vpc = new ec2.Vpc(scope, 'Vpc', {
    ipAddresses: ec2.IpAddresses.cidr(functionsVpcCidr),
    maxAzs: 2,
    // One NAT (instance or gateway) unless more are asked for: an AZ outage costs egress, not the door.
    natGateways: Math.max(1, natGateways),
    natGatewayProvider: natInstances ?? ec2.NatProvider.gateway(),
    subnetConfiguration: [
      { name: 'Public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 },
      { name: 'Compute', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 20 },
      // The container door's tasks and its internal load balancer: apart from user code, whose ACL denies 10.0.0.0/8.
      { name: doorSubnetGroup, subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 24 },
    ],
    // Restricting the default group takes a custom-resource Lambda; nothing is ever placed in it
    // (every Lambda and task names the compute group), so it stays as EC2 makes it.
    restrictDefaultSecurityGroup: false,
  });
  if (natInstances) natInstanceRules(natInstances);
  const flowLogs = new logs.LogGroup(scope, 'VpcFlowLogs', {
    retention: logs.RetentionDays.ONE_MONTH,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  vpc.addFlowLog('FlowLog', {
    destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogs),
    trafficType: ec2.FlowLogTrafficType.REJECT,
  });

  const computeSecurityGroup = new ec2.SecurityGroup(scope, 'ComputeSecurityGroup', {
    vpc: vpc,
    description: 'Slipway user functions: HTTPS out only, nothing in',
    allowAllOutbound: false,
  });
  computeSecurityGroup.addEgressRule(
    ec2.Peer.anyIpv4(),
    ec2.Port.tcp(443),
    'HTTPS to the internet (the network ACL removes private ranges)',
  );

  // Stateless, so both directions are listed: denies first (lower numbers win), then HTTPS out and its replies in.
  const computeNetworkAcl = new ec2.NetworkAcl(scope, 'ComputeNetworkAcl', {
    vpc: vpc,
    subnetSelection: computeSubnets,
  });
  blockedEgressRanges.forEach((cidr, index) => {
    for (const direction of [ec2.TrafficDirection.EGRESS, ec2.TrafficDirection.INGRESS]) {
      computeNetworkAcl.addEntry(`Deny${direction === ec2.TrafficDirection.EGRESS ? 'Out' : 'In'}${index}`, {
        ruleNumber: 100 + index * 10,
        cidr: ec2.AclCidr.ipv4(cidr),
        traffic: ec2.AclTraffic.allTraffic(),
        direction,
        ruleAction: ec2.Action.DENY,
      });
    }
  });
  computeNetworkAcl.addEntry('AllowHttpsOut', {
    ruleNumber: 200,
    cidr: ec2.AclCidr.anyIpv4(),
    traffic: ec2.AclTraffic.tcpPort(443),
    direction: ec2.TrafficDirection.EGRESS,
    ruleAction: ec2.Action.ALLOW,
  });
  Validations.of(computeNetworkAcl).acknowledge({
    id: 'AwsSolutions-VPC3',
    reason:
      'The spec blocks private ranges and the metadata address for user code; a security group can only allow, so the network ACL of the compute ' +
      'subnets is what denies those ranges before the HTTPS allow rule.',
  });
  computeNetworkAcl.addEntry('AllowRepliesIn', {
    ruleNumber: 200,
    cidr: ec2.AclCidr.anyIpv4(),
    traffic: ec2.AclTraffic.tcpPortRange(1024, 65535),
    direction: ec2.TrafficDirection.INGRESS,
    ruleAction: ec2.Action.ALLOW,
  });
  return { vpc, computeSecurityGroup, computeNetworkAcl };
}

/** What the NAT instance forwards and holds: HTTPS from the VPC out to the internet, an encrypted disk, no more. */
function natInstanceRules(provider: ec2.NatInstanceProviderV2) {
  // User code and the door send nothing but HTTPS; the instance's own package install at boot is HTTPS too.
  provider.securityGroup.addIngressRule(ec2.Peer.ipv4(functionsVpcCidr), ec2.Port.tcp(443), 'HTTPS from the private subnets, forwarded');
  provider.securityGroup.addEgressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(443), 'HTTPS to the internet');
  for (const instance of provider.gatewayInstances) {
    const cfn = instance.node.defaultChild as ec2.CfnInstance;
    // Amazon Linux 2023's root device, its 8 GB kept, encrypted.
    cfn.blockDeviceMappings = [{ deviceName: '/dev/xvda', ebs: { volumeSize: 8, volumeType: 'gp3', encrypted: true } }];
    Validations.of(instance).acknowledge({
      id: 'AwsSolutions-EC28',
      reason:
        'Detailed monitoring costs about $2 a month an instance; the NAT instance is watched through its status checks (5-minute metrics).',
    });
    Validations.of(instance).acknowledge({
      id: 'AwsSolutions-EC29',
      reason:
        'The NAT instance holds no data: it is replaced by a deploy, recovered by EC2 automatic recovery, and must go with the stack.',
    });
  }
}
