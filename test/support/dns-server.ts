import dns2 from 'dns2';

const { Packet } = dns2;

export type RecordType = 'TXT' | 'NS';

export interface TestDnsServer {
  /** `127.0.0.1:PORT`, the value of DNS_RESOLVER that points look-ups here. */
  address: string;
  /** What the server answers for a name and type from now on; [] forgets it (the name then does not exist). */
  set(name: string, type: RecordType, values: string[]): void;
  /** How many queries it received, by `name type`. */
  queries: string[];
  close(): Promise<void>;
}

/**
 * An authoritative-looking DNS server on loopback that answers exactly what a
 * test set, NXDOMAIN otherwise: verification look-ups never leave the machine.
 */
export async function startTestDnsServer(): Promise<TestDnsServer> {
  const answers = new Map<string, string[]>();
  const queries: string[] = [];
  const keyOf = (name: string, type: number) => `${name.toLowerCase().replace(/\.$/, '')} ${type}`;
  const server = dns2.createUDPServer((request, send) => {
    const response = Packet.createResponseFromRequest(request);
    const [question] = request.questions;
    if (question) {
      queries.push(
        `${question.name} ${question.type === Packet.TYPE.TXT ? 'TXT' : question.type === Packet.TYPE.NS ? 'NS' : question.type}`,
      );
      const values = answers.get(keyOf(question.name, question.type));
      if (values?.length) {
        for (const value of values) {
          response.answers.push(
            Packet.createResourceFromQuestion(question, question.type === Packet.TYPE.NS ? { ttl: 1, ns: value } : { ttl: 1, data: value }),
          );
        }
      } else {
        // NXDOMAIN: this name has nothing.
        response.header.rcode = 3;
      }
    }
    void send(response);
  });
  await server.listen(0, '127.0.0.1');
  const { port } = server.address();
  return {
    address: `127.0.0.1:${port}`,
    queries,
    set(name, type, values) {
      answers.set(keyOf(name, type === 'TXT' ? Packet.TYPE.TXT : Packet.TYPE.NS), values);
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
