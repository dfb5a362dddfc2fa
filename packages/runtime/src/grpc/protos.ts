// The CSI and registry services for grpc-js, built from precompiled descriptors. `npm run generate`
// turns proto/csi.proto and proto/registry.proto into protobufjs JSON (generated/descriptors.ts:
// one JSON per service with the messages and enums its methods carry) next to their TypeScript
// types; here protobufjs/light (no .proto parser) reads a service's JSON the first time the
// service is used, and each method gets serialisers with the conversions the generated types
// describe: field names as in the .proto (keepCase), 64-bit integers and enums as strings,
// defaults filled in, the name of the set oneof member. @grpc/proto-loader did the same from
// .proto text at start-up, and also converted every type to descriptor protos that nothing here
// uses, the largest part of a driver's start (e2e/bench/README.md, "Start-up: what each change
// did"). Parsing per service keeps a process from paying for services
// it never builds, and the node's CSI socket from waiting for the Controller service's ~60 types.
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs/light.js';
import type { ProtoGrpcType as CsiProto } from '../generated/csi.js';
import { SERVICE_DESCRIPTORS, type ServiceName } from '../generated/descriptors.js';
import type { ProtoGrpcType as RegistryProto } from '../generated/registry.js';

/** The same conversions as the type generator's flags (--longs=String --enums=String --defaults --oneofs). */
const TO_OBJECT: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true, oneofs: true };

function isServiceName(name: string): name is ServiceName {
  return Object.hasOwn(SERVICE_DESCRIPTORS, name);
}

/** The protobufjs root of one service: the service and the types it reaches. */
function serviceRoot(fullName: string): protobuf.Root {
  if (!isServiceName(fullName))
    throw new TypeError(
      `serviceDefinition: unknown service ${JSON.stringify(fullName)}; known: ${Object.keys(SERVICE_DESCRIPTORS).join(', ')}`,
    );
  return protobuf.Root.fromJSON(JSON.parse(SERVICE_DESCRIPTORS[fullName]) as protobuf.INamespace);
}

function serializer(type: protobuf.Type): (value: object) => Buffer {
  return (value) => Buffer.from(type.encode(type.fromObject(value)).finish());
}

function deserializer(type: protobuf.Type): (bytes: Buffer) => object {
  return (bytes) => type.toObject(type.decode(bytes), TO_OBJECT);
}

const definitions = new Map<string, grpc.ServiceDefinition>();

/** The grpc-js definition of one service (unary and streaming methods alike), built once. */
export function serviceDefinition(fullName: string): grpc.ServiceDefinition {
  let definition = definitions.get(fullName);
  if (definition === undefined) {
    definition = buildDefinition(fullName);
    definitions.set(fullName, definition);
  }
  return definition;
}

function buildDefinition(fullName: string): grpc.ServiceDefinition {
  const service = serviceRoot(fullName).lookupService(fullName);
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

/**
 * What grpc.loadPackageDefinition makes of `services` (their full names: package.Service): nested
 * package objects whose service clients are made on first access, so that only the services a
 * process touches are parsed.
 */
function lazyPackage(services: readonly string[]): Record<string, unknown> {
  const top: Record<string, unknown> = {};
  for (const fullName of services) {
    const path = fullName.split('.');
    const name = path.pop() ?? fullName;
    let ns = top;
    for (const part of path) ns = (ns[part] ??= {}) as Record<string, unknown>;
    let client: grpc.ServiceClientConstructor | undefined;
    Object.defineProperty(ns, name, {
      enumerable: true,
      get: () => (client ??= grpc.makeClientConstructor(serviceDefinition(fullName), name, {})),
    });
  }
  return top;
}

let csi: CsiProto | undefined;
let registry: RegistryProto | undefined;

/** The CSI v1 services (Identity, Controller, Node), each built on first use. Message types are not included. */
export function loadCsi(): CsiProto {
  csi ??= lazyPackage(['csi.v1.Identity', 'csi.v1.Controller', 'csi.v1.Node']) as unknown as CsiProto;
  return csi;
}

/** The controller<->node registry service, built on first use. */
export function loadRegistry(): RegistryProto {
  registry ??= lazyPackage(['pmemcsi.registry.v1.Registry']) as unknown as RegistryProto;
  return registry;
}
