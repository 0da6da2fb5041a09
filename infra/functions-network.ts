import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

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

/** The network of user code: its VPC (flow logs of rejects), a group that allows HTTPS out only, an ACL that denies private ranges. */
export function userCodeNetwork(scope: Construct) {
  // --- The network of user code -------------------------------------------------------------
  const vpc = new ec2.Vpc(scope, 'Vpc', {
    ipAddresses: ec2.IpAddresses.cidr(functionsVpcCidr),
    maxAzs: 2,
    // One NAT gateway: user functions are a closed beta; an AZ outage costs egress, not the door.
    natGateways: 1,
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
