import { Type } from 'typebox';
import { Nullable } from '../../schemas/common';

const text = (description?: string) => Nullable(Type.String(description === undefined ? {} : { description }));
const date = (description: string) => Nullable(Type.String({ format: 'date-time', description }));

export const WhoisQuery = Type.Object({
  domain: Type.String({
    description:
      'A domain name; internationalized names are accepted and looked up in their ASCII (punycode) form. A subdomain is ' +
      'looked up as its registrable domain (www.example.co.uk → example.co.uk). IP addresses are refused.',
    examples: ['example.com'],
  }),
});

const Registrant = Type.Object(
  {
    name: text(),
    organization: text(),
    street: text(),
    city: text(),
    state_province: text(),
    postal_code: text(),
    country: text(),
    email: text(),
    phone: text(),
  },
  { description: 'As published; often redacted for privacy.' },
);

const WhoisRecord = Type.Object({
  domain_name: text(),
  registrar: text(),
  registrar_url: text(),
  creation_date: date('ISO 8601, UTC.'),
  updated_date: date('ISO 8601, UTC.'),
  expiration_date: date('ISO 8601, UTC (the registry expiry date when the registry gives one).'),
  name_servers: Type.Array(Type.String(), { description: 'Lower case, without a trailing dot.' }),
  status: Type.Array(Type.String(), { description: 'EPP status codes (clientTransferProhibited, …) or the registry\'s own words.' }),
  dnssec: text(),
  registrant: Nullable(Registrant),
});

export const WhoisAnswer = Type.Object({
  domain_name: Type.String({ description: 'The domain looked up: lower case, ASCII, registrable.', examples: ['example.com'] }),
  raw: Type.String({ description: "The WHOIS answers about the domain as sent: the registry's, then the registrar's when the registry refers to one." }),
  parsed: Nullable(
    Type.Object(WhoisRecord.properties, {
      description:
        'The fields read from the answers (the registry\'s first, the registrar\'s filling the gaps); a field the record does not ' +
        'have is null or empty. Null when no answer holds a record of the domain (e.g. it is not registered).',
    }),
  ),
  check_date: Type.String({ format: 'date-time', description: 'When the WHOIS servers were asked; answers are cached, so it can be earlier than the call.' }),
});
