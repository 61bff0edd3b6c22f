/**
 * What a backend says about itself over the Describe RPC: enough for the core
 * to serve `?help=1` and OpenAPI without holding any zod schema (zod cannot
 * cross a process boundary, JSON Schema can).
 */
import type { PathOperation } from './logical.js';

export type JsonSchema = Record<string, unknown>;

/**
 * JSON Schema extension naming what a lenient field means (`bool`, `int`,
 * `duration (sec)`...), which its wire type list (`boolean|number|string`)
 * does not say: `?help=1` shows it, and an OpenAPI reader may.
 */
export const HELP_TYPE = 'x-strongroom-type';

export interface FieldDescription {
  name: string;
  /** JSON Schema of the field as it appears on the wire. */
  schema: JsonSchema;
  description: string;
  required: boolean;
  /** Value is secret: never logged, shown as HMAC in audit. */
  sensitive?: boolean;
  deprecated?: boolean;
  /** Captured from the URL pattern rather than the body. */
  inPath?: boolean;
  /** Sent as a URL query parameter on reads, lists and deletes (e.g. kv's `version`). */
  query?: boolean;
}

export interface OperationDescription {
  operation: PathOperation;
  summary: string;
  description?: string;
}

/**
 * An ACL check the core makes in place of the usual one on the request's own
 * path, for an operation that acts on other paths of the mount (kv's move and
 * copy act on `data/` and `metadata/` paths): every requirement must hold.
 */
export interface AclRequirement {
  /** A path relative to the mount; `{name}` is a capture of the pattern or a string field of the request body. */
  path: string;
  capability: 'create' | 'read' | 'update' | 'patch' | 'delete' | 'list';
  /** Checked only when this boolean field of the request is true (kv: `overwrite`). */
  when?: string;
}

export interface PathDescription {
  /** Template pattern as declared ("keys/:name", "hash{/:algorithm}", "data/*path"). */
  pattern: string;
  fields: FieldDescription[];
  operations: OperationDescription[];
  existenceCheck: boolean;
  synopsis: string;
  description: string;
  /** Unauthenticated (login-style) path. */
  unauthenticated?: boolean;
  /** Per operation: the ACL checks the core makes instead of the one on the request's path. */
  authorize?: Partial<Record<PathOperation, AclRequirement[]>>;
}

export interface BackendDescription {
  /** Markdown help for the backend as a whole. */
  help: string;
  paths: PathDescription[];
  /** Declared secret (lease) types. */
  secretTypes: string[];
}
