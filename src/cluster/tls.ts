/**
 * The cluster's TLS, made by `deno task cluster up` when it binds beyond loopback: a certificate authority of its own
 * (one per data directory) and the server's certificate, signed by it, naming every address and host name a member
 * may dial (loopback, this machine's host name and interface addresses, and any `--tls-name`). Members trust that CA
 * alone (its certificate travels in their credentials files), so no public CA and no operator's PKI is involved, and
 * a server that cannot prove it holds the certificate's key is refused before any credential is presented.
 *
 * Certificates are made with `@peculiar/x509` (npm, MIT) over the runtime's WebCrypto (ECDSA P-256, SHA-256), chosen
 * over Debian's `openssl` command line: no second program to install or to find on PATH, no command lines or config
 * files whose options differ between OpenSSL versions, and errors that arrive as exceptions rather than text on
 * stderr. Version 1 of the package is pinned because it carries the `reflect-metadata` polyfill its dependency
 * injection needs, which version 2 leaves to the program. It is imported on first use by a specifier held in a
 * variable (as the Hub's package is), so only a command that makes a certificate fetches it.
 */

import { machineNames } from "../env/server/access.ts";

/** The pinned package. */
export const X509_PACKAGE = "npm:@peculiar/x509@1.14.3";

/** PEM texts of a certificate and its private key (PKCS #8). */
export interface KeyPair {
  cert: string;
  key: string;
}

const ALG = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
const YEAR_MS = 365 * 86400_000;

// deno-lint-ignore no-explicit-any
let loaded: Promise<any> | undefined;

// deno-lint-ignore no-explicit-any
async function x509(): Promise<any> {
  const spec = X509_PACKAGE;
  return await (loaded ??= import(spec).then((lib) => (lib.cryptoProvider.set(crypto), lib)));
}

function serial(): string {
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("")
    .replace(/^[89a-f]/, "7"); // positive, as X.509 asks
}

async function pemKey(key: CryptoKey): Promise<string> {
  const der = new Uint8Array(await crypto.subtle.exportKey("pkcs8", key));
  const b64 = btoa(String.fromCharCode(...der)).match(/.{1,64}/g)!.join("\n");
  return `-----BEGIN PRIVATE KEY-----\n${b64}\n-----END PRIVATE KEY-----\n`;
}

async function importKey(pem: string): Promise<CryptoKey> {
  const b64 = pem.replace(/-----[A-Z ]+-----/g, "").replace(/\s+/g, "");
  const der = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  return await crypto.subtle.importKey("pkcs8", der, ALG, true, ["sign"]);
}

/** A new certificate authority for one cluster, valid for `years` (default 10). */
export async function makeCa(years = 10): Promise<KeyPair> {
  const lib = await x509();
  const keys = await crypto.subtle.generateKey(ALG, true, ["sign", "verify"]) as CryptoKeyPair;
  const now = Date.now();
  const cert = await lib.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=Crucible cluster CA ${crypto.randomUUID().slice(0, 8)}`,
    notBefore: new Date(now - 3600_000),
    notAfter: new Date(now + years * YEAR_MS),
    signingAlgorithm: ALG,
    keys,
    extensions: [
      new lib.BasicConstraintsExtension(true, 0, true),
      new lib.KeyUsagesExtension(lib.KeyUsageFlags.keyCertSign | lib.KeyUsageFlags.cRLSign, true),
    ],
  });
  return { cert: cert.toString("pem"), key: await pemKey(keys.privateKey) };
}

/** A server certificate for `names` (IP addresses and DNS names), signed by `ca`, valid for `years` (default 5). */
export async function serverCertificate(ca: KeyPair, names: readonly string[], years = 5): Promise<KeyPair> {
  const lib = await x509();
  const keys = await crypto.subtle.generateKey(ALG, true, ["sign", "verify"]) as CryptoKeyPair;
  const issuer = new lib.X509Certificate(ca.cert);
  const now = Date.now();
  const cert = await lib.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: "CN=Crucible cluster NATS server",
    issuer: issuer.subject,
    notBefore: new Date(now - 3600_000),
    notAfter: new Date(now + years * YEAR_MS),
    signingAlgorithm: ALG,
    publicKey: keys.publicKey,
    signingKey: await importKey(ca.key),
    extensions: [
      new lib.BasicConstraintsExtension(false, undefined, true),
      new lib.KeyUsagesExtension(lib.KeyUsageFlags.digitalSignature, true),
      new lib.ExtendedKeyUsageExtension([lib.ExtendedKeyUsage.serverAuth]),
      new lib.SubjectAlternativeNameExtension(
        names.map((n) => ({ type: isIp(n) ? "ip" : "dns", value: n })),
      ),
    ],
  });
  return { cert: cert.toString("pem"), key: await pemKey(keys.privateKey) };
}

/** The IP addresses and DNS names a server certificate of `pem` holds. */
export async function certificateNames(pem: string): Promise<string[]> {
  const lib = await x509();
  const ext = new lib.X509Certificate(pem).getExtension(lib.SubjectAlternativeNameExtension);
  return ext?.names.items.map((n: { value: string }) => n.value) ?? [];
}

/**
 * The names a member may dial this machine by: loopback, `localhost`, the host name, every interface's address,
 * `host` when it is a specific address, and `extra` (cluster up --tls-name).
 */
export function localNames(host: string, extra: readonly string[] = []): string[] {
  const names = ["127.0.0.1", "::1", "localhost", ...extra, ...machineNames()];
  if (host !== "0.0.0.0" && host !== "::") names.push(host);
  return [...new Set(names.filter((n) => n.length > 0))];
}

function isIp(name: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(name) || name.includes(":");
}
