// The CSI and registry services for grpc-js, built from precompiled descriptors. `npm run generate`
// turns proto/csi.proto and proto/registry.proto into protobufjs JSON (generated/descriptors.ts)
// next to their TypeScript types; here protobufjs/light (no .proto parser) reads that JSON and
// each method gets serialisers with the conversions the generated types describe: field names as
// in the .proto (keepCase), 64-bit integers and enums as strings, defaults filled in, the name of
// the set oneof member. @grpc/proto-loader did the same from .proto text at start-up, and also
// converted every type to descriptor protos that nothing here uses: ~150 ms of CPU per start.
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs/light.js';
import type { ProtoGrpcType as CsiProto } from '../generated/csi.js';
import { PROTO_DESCRIPTORS_JSON } from '../generated/descriptors.js';
import type { ProtoGrpcType as RegistryProto } from '../generated/registry.js';

/** The same conversions as the type generator's flags (--longs=String --enums=String --defaults --oneofs). */
const TO_OBJECT: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true, oneofs: true };

let root: protobuf.Root | undefined;

function descriptors(): protobuf.Root {
  root ??= protobuf.Root.fromJSON(JSON.parse(PROTO_DESCRIPTORS_JSON) as protobuf.INamespace);
  return root;
}

function serializer(type: protobuf.Type): (value: object) => Buffer {
  return (value) => Buffer.from(type.encode(type.fromObject(value)).finish());
}

function deserializer(type: protobuf.Type): (bytes: Buffer) => object {
  return (bytes) => type.toObject(type.decode(bytes), TO_OBJECT);
}

/** The grpc-js definition of one service (unary and streaming methods alike). */
export function serviceDefinition(fullName: string): grpc.ServiceDefinition {
  const service = descriptors().lookupService(fullName);
  const definition: Record<string, grpc.MethodDefinition<object, object>> = {};
  for (const method of service.methodsArray) {
    method.resolve();
    const request = method.resolvedRequestType;
    const response = method.resolvedResponseType;
    if (request === null || response === null)
      throw new Error(`${fullName}.${method.name}: message types not resolved`);
    definition[method.name] = {
      path: `/${fullName}/${method.name}`,
      requestStream: method.requestStream === true,
      responseStream: method.responseStream === true,
      requestSerialize: serializer(request),
      requestDeserialize: deserializer(request),
      responseSerialize: serializer(response),
      responseDeserialize: deserializer(response),
      originalName: method.name.charAt(0).toLowerCase() + method.name.slice(1),
    };
  }
  return definition;
}

/** A package definition with the services of `names` (what grpc.loadPackageDefinition takes). */
function packageOf(names: readonly string[]): grpc.GrpcObject {
  const definition: Record<string, grpc.ServiceDefinition> = {};
  for (const name of names) definition[name] = serviceDefinition(name);
  return grpc.loadPackageDefinition(definition);
}

let csi: CsiProto | undefined;
let registry: RegistryProto | undefined;

/** The CSI v1 services (Identity, Controller, Node), loaded once. Message types are not included. */
export function loadCsi(): CsiProto {
  csi ??= packageOf(['csi.v1.Identity', 'csi.v1.Controller', 'csi.v1.Node']) as unknown as CsiProto;
  return csi;
}

/** The controller<->node registry service, loaded once. */
export function loadRegistry(): RegistryProto {
  registry ??= packageOf(['pmemcsi.registry.v1.Registry']) as unknown as RegistryProto;
  return registry;
}
