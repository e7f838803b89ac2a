import { Type } from 'typebox';
import { Nullable, StringEnum } from '@notify/core';

export { Nullable, StringEnum };

/** A query parameter the handler parses itself (repeatable, comma-separated lists, dates). */
export function QueryParam(description: string, example?: string) {
  return Type.Unsafe<string | string[]>({
    type: ['string', 'array'],
    items: { type: 'string' },
    description,
    ...(example !== undefined && { examples: [example] }),
  });
}

/** A body field that may not be sent: `{not: {}}` fails for any value, with the "cannot be changed" message. */
export function Immutable(description: string) {
  return Type.Optional(Type.Unsafe<never>({ not: {}, description }));
}

export const GatewayErrorBody = Type.Object(
  { message: Type.String(), request_id: Type.String({ format: 'uuid' }) },
  { $id: 'GatewayError', description: 'Authentication, plan, rate limit or routing error.' },
);

export const ApplicationErrorBody = Type.Object(
  {
    code: Type.Integer({ examples: [10400] }),
    details: Nullable(Type.String()),
    parameters: Type.Array(Type.Object({ param: Type.String(), details: Type.Array(Type.String()) })),
    solution: Type.String({ description: 'Address of the reference documentation.' }),
  },
  { $id: 'ApplicationError', description: 'Validation, not-found, conflict or server error.' },
);

export const gatewayRef = Type.Unsafe({ $ref: 'GatewayError#' });
export const applicationRef = Type.Unsafe({ $ref: 'ApplicationError#' });

/** Error responses every API-key route can give. */
export const apiKeyErrorResponses = {
  400: applicationRef,
  401: gatewayRef,
  403: gatewayRef,
  429: gatewayRef,
};
