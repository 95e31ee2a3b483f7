import t from 'tap';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import tls from 'node:tls';
import { eventually, startGateway } from '../helpers/gateway.js';
import { makeCertificate, rotateCertificate } from '../helpers/tls.js';

function httpsGet(port: number, ca: Buffer, path: string): Promise<{ status: number; headers: Record<string, unknown>; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', servername: 'localhost', port, path, ca, headers: { 'user-agent': 'tls-test' }, agent: false }, (res) => {
      const fingerprint = (res.socket as tls.TLSSocket).getPeerCertificate().fingerprint256;
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, fingerprint }));
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('the gateway terminates TLS 1.2+, sets HSTS, and reloads a rotated certificate', async (t) => {
  const cert = makeCertificate();
  t.teardown(cert.cleanup);
  const gw = await startGateway(t, { env: { AUTHGATE_TLS_CERT_FILE: cert.certFile, AUTHGATE_TLS_KEY_FILE: cert.keyFile } });
  const port = Number(new URL(gw.publicUrl).port);

  const first = await httpsGet(port, readFileSync(cert.certFile), '/accounts');
  t.equal(first.status, 401, 'served over HTTPS');
  t.match(first.headers['strict-transport-security'], /max-age=\d+/);

  const old = await new Promise<string>((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, maxVersion: 'TLSv1.1', minVersion: 'TLSv1' });
    socket.on('secureConnect', () => resolve(`connected with ${socket.getProtocol()}`));
    socket.on('error', () => resolve('refused'));
  });
  t.equal(old, 'refused', 'TLS 1.1 and older are refused');

  rotateCertificate(cert);
  const rotated = readFileSync(cert.certFile);
  const reloaded = await eventually(async () => {
    try {
      return (await httpsGet(port, rotated, '/accounts')).fingerprint !== first.fingerprint;
    } catch {
      return false;
    }
  }, 10_000, 200);
  t.ok(reloaded, 'the new certificate is served without a restart');
  t.ok(gw.logs.records().some((r) => r['event'] === 'tls.reloaded'));
});

t.test('plain HTTP sets no HSTS', async (t) => {
  const gw = await startGateway(t);
  const res = await gw.get('/accounts');
  t.equal(res.headers['strict-transport-security'], undefined);
});
