import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import { isoCBOR } from "@simplewebauthn/server/helpers";

/**
 * A software FIDO2 authenticator (packed "none" attestation, ES256) for tests that run the
 * WebAuthn ceremonies without a browser: it builds real attestation and assertion responses.
 */
export class SoftAuthenticator {
  readonly credentialId = randomBytes(32);
  private readonly keys = generateKeyPairSync("ec", { namedCurve: "P-256" });
  counter = 0;
  userHandle: string | null = null;

  constructor(
    private readonly origin: string,
    private readonly rpId: string,
  ) {}

  private coseKey(): Uint8Array {
    const jwk = this.keys.publicKey.export({ format: "jwk" }) as { x: string; y: string };
    const map = new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x, "base64url")],
      [-3, Buffer.from(jwk.y, "base64url")],
    ]);
    return isoCBOR.encode(map);
  }

  private clientData(type: string, challenge: string, origin = this.origin): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** navigator.credentials.create(), as the JSON the browser library sends. */
  register(options: { challenge: string; user: { id: string } }, overrides: { origin?: string; rpId?: string } = {}) {
    this.userHandle = Buffer.from(options.user.id, "base64url").toString("utf8");
    this.counter = 1;
    const idLen = Buffer.alloc(2);
    idLen.writeUInt16BE(this.credentialId.length);
    const attested = Buffer.concat([Buffer.alloc(16), idLen, this.credentialId, Buffer.from(this.coseKey())]);
    const authData = Buffer.concat([createHash("sha256").update(overrides.rpId ?? this.rpId).digest(), Buffer.from([0x45]), Buffer.from([0, 0, 0, 1]), attested]);
    const attestation = new Map<string, Parameters<typeof isoCBOR.encode>[0]>([
      ["fmt", "none"],
      ["attStmt", new Map()],
      ["authData", new Uint8Array(authData)],
    ]);
    const attestationObject = isoCBOR.encode(attestation);
    return this.credential({
      clientDataJSON: this.clientData("webauthn.create", options.challenge, overrides.origin).toString("base64url"),
      attestationObject: Buffer.from(attestationObject).toString("base64url"),
      transports: ["internal"],
    });
  }

  /** navigator.credentials.get(); `counter` lets a test replay an old one. */
  assert(options: { challenge: string }, overrides: { origin?: string; counter?: number; rpId?: string } = {}) {
    this.counter = overrides.counter ?? this.counter + 1;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(this.counter);
    const authData = Buffer.concat([createHash("sha256").update(overrides.rpId ?? this.rpId).digest(), Buffer.from([0x05]), counter]);
    const clientDataJSON = this.clientData("webauthn.get", options.challenge, overrides.origin);
    const signature = sign("sha256", Buffer.concat([authData, createHash("sha256").update(clientDataJSON).digest()]), this.keys.privateKey as KeyObject);
    return this.credential({
      clientDataJSON: clientDataJSON.toString("base64url"),
      authenticatorData: authData.toString("base64url"),
      signature: signature.toString("base64url"),
      userHandle: this.userHandle ? Buffer.from(this.userHandle).toString("base64url") : undefined,
    });
  }

  /** The PublicKeyCredential around an authenticator's response, as the browser library sends it. */
  private credential<R>(response: R) {
    const id = this.credentialId.toString("base64url");
    return { id, rawId: id, type: "public-key", response, clientExtensionResults: {}, authenticatorAttachment: "platform" };
  }
}
