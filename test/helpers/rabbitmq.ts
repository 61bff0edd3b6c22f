/**
 * A real RabbitMQ with the management plugin for tests (scripts/services/kinds/rabbitmq.js
 * through services.ts): the private instance running for this checkout, or
 * STRONGROOM_TEST_RABBITMQ_URL as given (the management API with an
 * administrator's credentials inline: http://admin:PW@127.0.0.1:15672), with
 * STRONGROOM_TEST_RABBITMQ_AMQP_URL for its AMQP listener (asked of the
 * management API when not set).
 */
import * as amqp from 'amqplib';
import { dedicatedService, sharedService } from './services';

const ENV = 'STRONGROOM_TEST_RABBITMQ_URL';
const AMQP_ENV = 'STRONGROOM_TEST_RABBITMQ_AMQP_URL';

export interface Broker {
  /** Management API base URL, without credentials. */
  api: string;
  username: string;
  password: string;
  /** AMQP listener, without credentials: amqp://127.0.0.1:PORT. */
  amqp: string;
  /** Calls the management API as the administrator. */
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
}

async function brokerOf(url: string, amqpUrl: string | undefined): Promise<Broker> {
  const u = new URL(url);
  const username = decodeURIComponent(u.username);
  const password = decodeURIComponent(u.password);
  u.username = '';
  u.password = '';
  const api = u.toString().replace(/\/+$/, '');
  const auth = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  const admin: Broker['admin'] = async (method, path, body) => {
    const res = await fetch(`${api}${path}`, {
      method,
      headers: { authorization: auth, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  let amqpBase = amqpUrl;
  if (!amqpBase) {
    const overview = await admin('GET', '/api/overview');
    const listener = (overview.body.listeners as { protocol: string; port: number }[]).find((l) => l.protocol === 'amqp');
    if (!listener) throw new Error('the broker has no AMQP listener');
    amqpBase = `amqp://${u.hostname}:${listener.port}`;
  }
  return { api, username, password, amqp: amqpBase, admin };
}

/** The shared broker of this test run. */
export async function sharedBroker(): Promise<Broker> {
  const vars = sharedService('rabbitmq', ENV);
  return brokerOf(vars[ENV]!, vars[AMQP_ENV] ?? process.env[AMQP_ENV]);
}

export interface DedicatedBroker extends Broker {
  /** Stops the broker in place (same ports and data). */
  stop(): Promise<void>;
  /** Starts it again after stop(). */
  start(): Promise<void>;
  drop(): void;
}

/** A private broker for one test file alone (an outage test). */
export async function dedicatedBroker(): Promise<DedicatedBroker> {
  const d = dedicatedService('rabbitmq');
  const b = await brokerOf(d.url, d.vars[AMQP_ENV]);
  // stop() and start() block this process for seconds (a broker's stop or boot); meanwhile the strongroom
  // server closes idle keep-alive sockets, and a request sent before the event loop has seen that would
  // reuse a dead one ("other side closed"). A turn of the loop lets the client drop them first.
  const settle = () => new Promise((r) => setTimeout(r, 200));
  return Object.assign(b, {
    stop: async () => {
      d.stop();
      await settle();
    },
    start: async () => {
      d.start();
      await settle();
    },
    drop: d.drop,
  });
}

/** An AMQP connection as `username` (amqplib); the caller closes it. */
export function amqpConnect(b: Broker, username: string, password: string): Promise<amqp.ChannelModel> {
  const u = new URL(b.amqp);
  u.username = encodeURIComponent(username);
  u.password = encodeURIComponent(password);
  return amqp.connect(u.toString(), { timeout: 10_000 });
}

/** Why an AMQP login fails ('logged in' when it does not). */
export async function amqpLoginFailure(b: Broker, username: string, password: string): Promise<string> {
  try {
    const c = await amqpConnect(b, username, password);
    await c.close();
    return 'logged in';
  } catch (err) {
    return (err as Error).message;
  }
}
