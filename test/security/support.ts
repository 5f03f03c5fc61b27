/**
 * Raw HTTP for attack tests: node:http lets a test send what fetch refuses to (a foreign Host
 * header, a body that never ends), and a plain socket lets it trickle bytes.
 */
import http from 'node:http';
import net from 'node:net';

export interface RawHttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json?: any;
}

/** One HTTP/1.1 request with exactly these headers (Host included). */
export function rawHttp(url: string, init: { method?: string; headers?: Record<string, string>; body?: string | Buffer }): Promise<RawHttpResponse> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const request = http.request({
      host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: init.method ?? 'GET',
      headers: init.headers, setHost: !init.headers || !Object.keys(init.headers).some((h) => h.toLowerCase() === 'host'),
    }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text, json });
      });
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(init.body);
  });
}

/**
 * Sends `head` and then `body` one byte every `intervalMs` on a raw socket; resolves with what the
 * server answered when it closed the connection and how many body bytes it had accepted by then.
 */
export function trickle(url: string, head: string, body: string, intervalMs: number): Promise<{ answer: string; sent: number; finished: boolean }> {
  const target = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(target.port), target.hostname);
    let answer = '';
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ answer, sent, finished: sent >= body.length });
    });
    socket.on('connect', () => {
      socket.write(head);
      timer = setInterval(() => {
        if (socket.destroyed || sent >= body.length) return clearInterval(timer);
        socket.write(body[sent]);
        sent += 1;
      }, intervalMs);
    });
  });
}

/** Sends raw bytes on a fresh connection; resolves with everything the server answered before closing. */
export function rawExchange(url: string, bytes: string): Promise<string> {
  const target = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(target.port), target.hostname, () => socket.end(bytes));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(answer));
  });
}

/** A JSON value nested `depth` levels deep: [[[ … ]]] or {"a":{"a": … }}. */
export function nested(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}
