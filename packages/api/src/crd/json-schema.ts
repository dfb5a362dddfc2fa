// The subset of apiextensions.k8s.io/v1 JSONSchemaProps that our CRD uses. Typing the schema
// constant with it keeps the single source of truth free of `any` and of keywords that a
// structural schema forbids (e.g. `additionalProperties: false`, `$ref`, `oneOf` with types).

export type JSONValue = string | number | boolean | null | readonly JSONValue[] | { readonly [key: string]: JSONValue };

export type JSONSchemaType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';

export interface JSONSchemaProps {
  readonly type?: JSONSchemaType;
  readonly description?: string;
  readonly format?: string;
  readonly enum?: readonly JSONValue[];
  readonly default?: JSONValue;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly required?: readonly string[];
  readonly properties?: { readonly [name: string]: JSONSchemaProps };
  readonly additionalProperties?: JSONSchemaProps;
  readonly items?: JSONSchemaProps;
  readonly anyOf?: readonly JSONSchemaProps[];
  readonly 'x-kubernetes-int-or-string'?: true;
  readonly 'x-kubernetes-preserve-unknown-fields'?: true;
  readonly 'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  readonly 'x-kubernetes-list-map-keys'?: readonly string[];
  readonly 'x-kubernetes-map-type'?: 'granular' | 'atomic';
}
