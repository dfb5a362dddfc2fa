// A minimal client of the OCI distribution API (no auth) over TLS with a given CA: what the
// release and its checks need to read back — does a tag or digest exist, which digest a tag
// names, the manifest's size and the sizes of what it references.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';

export const MANIFEST_TYPES = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.docker.distribution.manifest.v2+json',
] as const;

export interface ManifestInfo {
  /** sha256:<hex> of the manifest bytes (checked against Docker-Content-Digest). */
  readonly digest: string;
  readonly mediaType: string;
  /** Bytes of the manifest itself. */
  readonly manifestSize: number;
  /** The manifest plus its config and layers (or the manifests an index lists), as the registry stores them. */
  readonly totalSize: number;
  readonly json: OciManifest;
}

export interface OciDescriptor {
  readonly mediaType?: string;
  readonly digest: string;
  readonly size: number;
  readonly artifactType?: string;
  readonly annotations?: Record<string, string>;
}

export interface OciManifest {
  readonly mediaType?: string;
  readonly artifactType?: string;
  readonly config?: OciDescriptor;
  readonly layers?: readonly OciDescriptor[];
  readonly manifests?: readonly OciDescriptor[];
  readonly annotations?: Record<string, string>;
}

export class RegistryError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
  ) {
    super(message);
    this.name = 'RegistryError';
  }
}

interface Response {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

export class RegistryClient {
  readonly #ca: Buffer;

  /** host: host:port of the registry; caFile: the PEM that its certificate chains to. */
  constructor(
    readonly host: string,
    caFile: string,
  ) {
    this.#ca = readFileSync(caFile);
  }

  #get(path: string, accept?: string, timeoutMs = 15_000): Promise<Response> {
    const [hostname, port] = splitHost(this.host);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          hostname,
          port,
          path,
          method: 'GET',
          ca: this.#ca,
          headers: accept === undefined ? {} : { accept },
          timeout: timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
          );
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`GET https://${this.host}${path}: no answer in ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end();
    });
  }

  /** GET /v2/ must answer 200 (the registry is up and its certificate chains to the CA). */
  async ping(): Promise<void> {
    const r = await this.#get('/v2/', undefined, 3_000);
    if (r.status !== 200) throw new RegistryError(`GET https://${this.host}/v2/: HTTP ${r.status}`, r.status);
  }

  /** The manifest `reference` (a tag or sha256:...) of `repository`; undefined when the registry has none. */
  async manifest(repository: string, reference: string): Promise<ManifestInfo | undefined> {
    const r = await this.#get(`/v2/${repository}/manifests/${reference}`, MANIFEST_TYPES.join(', '));
    if (r.status === 404) return undefined;
    if (r.status !== 200)
      throw new RegistryError(
        `GET ${this.host}/${repository} manifest ${reference}: HTTP ${r.status} ${r.body.toString('utf8').slice(0, 200)}`,
        r.status,
      );
    const digest = `sha256:${createHash('sha256').update(r.body).digest('hex')}`;
    const said = r.headers['docker-content-digest'];
    if (typeof said === 'string' && said !== digest)
      throw new RegistryError(
        `${this.host}/${repository}:${reference}: Docker-Content-Digest ${said}, the bytes hash to ${digest}`,
        r.status,
      );
    const json = JSON.parse(r.body.toString('utf8')) as OciManifest;
    const refs = [json.config, ...(json.layers ?? []), ...(json.manifests ?? [])].filter(
      (d): d is OciDescriptor => d !== undefined,
    );
    const contentType = r.headers['content-type'];
    return {
      digest,
      mediaType: json.mediaType ?? (typeof contentType === 'string' ? contentType : ''),
      manifestSize: r.body.length,
      totalSize: r.body.length + refs.reduce((s, d) => s + d.size, 0),
      json,
    };
  }

  /** The bytes of a blob, checked against its digest. */
  async blob(repository: string, digest: string): Promise<Buffer> {
    const r = await this.#get(`/v2/${repository}/blobs/${digest}`);
    // The filesystem driver serves blobs itself; a redirect would mean another storage.
    if (r.status !== 200)
      throw new RegistryError(`GET ${this.host}/${repository} blob ${digest}: HTTP ${r.status}`, r.status);
    const got = `sha256:${createHash('sha256').update(r.body).digest('hex')}`;
    if (got !== digest)
      throw new RegistryError(`${this.host}/${repository} blob ${digest}: the bytes hash to ${got}`, r.status);
    return r.body;
  }

  /** Tags of a repository (empty when it does not exist). */
  async tags(repository: string): Promise<string[]> {
    const r = await this.#get(`/v2/${repository}/tags/list`);
    if (r.status === 404) return [];
    if (r.status !== 200) throw new RegistryError(`GET ${this.host}/${repository} tags: HTTP ${r.status}`, r.status);
    return (JSON.parse(r.body.toString('utf8')) as { tags: string[] | null }).tags ?? [];
  }
}

function splitHost(host: string): [string, number] {
  const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(host);
  if (m?.[1] === undefined || m[2] === undefined) return [host, 443];
  return [m[1].replace(/^\[|\]$/g, ''), Number(m[2])];
}
