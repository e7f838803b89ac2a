/**
 * WHOIS answers in the formats real servers send (trimmed of most legal text), for the
 * parser's tests and for the loopback WHOIS servers of the API tests.
 */

/** whois.iana.org for a .com name: the directory's answer, referring to the registry. */
export function ianaAnswer(registry: string): string {
  return `% IANA WHOIS server
% for more information on IANA, visit http://www.iana.org
% This query returned 1 object

refer:        ${registry}

domain:       COM

organisation: VeriSign Global Registry Services
address:      12061 Bluemont Way
address:      Reston VA 20190
address:      United States of America (the)

contact:      administrative
name:         Registry Customer Service
organisation: VeriSign Global Registry Services
e-mail:       info@verisign-grs.com

nserver:      A.GTLD-SERVERS.NET 192.5.6.30 2001:503:a83e:0:0:0:2:30
nserver:      B.GTLD-SERVERS.NET 192.33.14.30 2001:503:231d:0:0:0:2:30
ds-rdata:     19718 13 2 8acbb0cd28f41250a80a491389424d341522d946b0da0c0291f2d3d771d7805a

whois:        ${registry}

status:       ACTIVE
remarks:      Registration information: http://www.verisigninc.com

created:      1985-01-01
changed:      2023-12-07
source:       IANA

`;
}

/** whois.verisign-grs.com (a thin registry): the domain's registry data and its registrar's WHOIS server. */
export function verisignAnswer(domain: string, registrar: string): string {
  const upper = domain.toUpperCase();
  return `   Domain Name: ${upper}
   Registry Domain ID: 2138514_DOMAIN_COM-VRSN
   Registrar WHOIS Server: ${registrar}
   Registrar URL: http://www.markmonitor.com
   Updated Date: 2019-09-09T15:39:04Z
   Creation Date: 1997-09-15T04:00:00Z
   Registry Expiry Date: 2028-09-14T04:00:00Z
   Registrar: MarkMonitor Inc.
   Registrar IANA ID: 292
   Registrar Abuse Contact Email: abusecomplaints@markmonitor.com
   Registrar Abuse Contact Phone: +1.2086851750
   Domain Status: clientDeleteProhibited https://icann.org/epp#clientDeleteProhibited
   Domain Status: clientTransferProhibited https://icann.org/epp#clientTransferProhibited
   Domain Status: clientUpdateProhibited https://icann.org/epp#clientUpdateProhibited
   Domain Status: serverDeleteProhibited https://icann.org/epp#serverDeleteProhibited
   Name Server: NS1.GOOGLE.COM
   Name Server: NS2.GOOGLE.COM
   Name Server: NS3.GOOGLE.COM
   Name Server: NS4.GOOGLE.COM
   DNSSEC: unsigned
   URL of the ICANN Whois Inaccuracy Complaint Form: https://www.icann.org/wicf/
>>> Last update of whois database: 2024-09-12T11:22:33Z <<<

For more information on Whois status codes, please visit https://icann.org/epp

NOTICE: The expiration date displayed in this record is the date the
registrar's sponsorship of the domain name registration in the registry is
currently set to expire. This date does not necessarily reflect the expiration
date of the domain name registrant's agreement with the sponsoring
registrar.

TERMS OF USE: You are not authorized to access or query our Whois
database through the use of electronic processes that are high-volume and
automated except as reasonably necessary to register domain names or
modify existing registrations; Registered on: 01-Jan-1970 is not a field.
`;
}

/** Verisign for a name nobody registered. */
export function verisignNoMatch(domain: string): string {
  return `No match for "${domain.toUpperCase()}".
>>> Last update of whois database: 2024-09-12T11:22:33Z <<<

NOTICE: The expiration date displayed in this record is the date the
registrar's sponsorship of the domain name registration in the registry is
currently set to expire.
`;
}

/** whois.markmonitor.com (a registrar): the thick record, registrant included; it names itself as WHOIS server. */
export function markmonitorAnswer(domain: string): string {
  return `Domain Name: ${domain}
Registry Domain ID: 2138514_DOMAIN_COM-VRSN
Registrar WHOIS Server: whois.markmonitor.com
Registrar URL: http://www.markmonitor.com
Updated Date: 2019-09-09T15:39:04+0000
Creation Date: 1997-09-15T07:00:00+0000
Registrar Registration Expiration Date: 2028-09-13T07:00:00+0000
Registrar: MarkMonitor, Inc.
Registrar IANA ID: 292
Registrar Abuse Contact Email: abusecomplaints@markmonitor.com
Registrar Abuse Contact Phone: +1.2086851750
Domain Status: clientUpdateProhibited (https://www.icann.org/epp#clientUpdateProhibited)
Domain Status: clientTransferProhibited (https://www.icann.org/epp#clientTransferProhibited)
Domain Status: clientDeleteProhibited (https://www.icann.org/epp#clientDeleteProhibited)
Registrant Name: REDACTED FOR PRIVACY
Registrant Organization: Google LLC
Registrant Street: REDACTED FOR PRIVACY
Registrant City: REDACTED FOR PRIVACY
Registrant State/Province: CA
Registrant Postal Code: REDACTED FOR PRIVACY
Registrant Country: US
Registrant Phone: REDACTED FOR PRIVACY
Registrant Email: Select Request Email Form at https://domains.markmonitor.com/whois/${domain}
Admin Organization: Google LLC
Admin Country: US
Tech Organization: Google LLC
Tech Country: US
Name Server: ns1.google.com
Name Server: ns4.google.com
Name Server: ns3.google.com
Name Server: ns2.google.com
DNSSEC: unsigned
URL of the ICANN WHOIS Data Problem Reporting System: http://wdprs.internic.net/
>>> Last update of WHOIS database: 2024-09-12T11:20:05+0000 <<<

For more information on WHOIS status codes, please visit:
  https://www.icann.org/resources/pages/epp-status-codes

If you wish to contact this domain’s Registrant, Administrative, or Technical
contact, and such email address is not visible above, you may do so via our web
form, pursuant to ICANN’s Temporary Specification. To verify that you are not a
robot, please enter your email address to receive a link to a page that
facilitates email communication with the relevant contact(s).
`;
}

/** whois.nic.uk (Nominet): indented blocks, dates as 14-Feb-1999. */
export const NOMINET = `
    Domain name:
        google.co.uk

    Data validation:
        Nominet was able to match the registrant's name and address against a 3rd party data source on 10-Dec-2012

    Registrar:
        Markmonitor Inc. t/a MarkMonitor Inc. [Tag = MARKMONITOR]
        URL: http://www.markmonitor.com

    Relevant dates:
        Registered on: 14-Feb-1999
        Expiry date:  14-Feb-2026
        Last updated:  13-Jan-2025

    Registration status:
        Registered until expiry date.

    Name servers:
        ns1.google.com
        ns2.google.com
        ns3.google.com
        ns4.google.com

    WHOIS lookup made at 11:22:33 12-Sep-2024

--
This WHOIS information is provided for free by Nominet UK the central registry
for .uk domain names. This information and the .uk WHOIS are:

    Copyright Nominet UK 1996 - 2024.
`;

/** whois.denic.de: few fields, `Nserver:` and `Changed:` with an offset. */
export const DENIC = `% Restricted rights.
%
% Terms and Conditions of Use
%
% The above data may only be used within the scope of technical or
% administrative necessities of Internet operation or to remedy legal
% problems.

Domain: google.de
Nserver: ns1.google.com
Nserver: ns2.google.com
Nserver: ns3.google.com
Nserver: ns4.google.com
Status: connect
Changed: 2018-03-12T21:44:25+01:00
`;

/** whois.jprs.jp with /e: bracketed keys, dates in Japan time. */
export const JPRS = `[ JPRS database provides information on network administration. Its use is    ]
[ restricted to network administration purposes. For further information,     ]
[ use 'whois -h whois.jprs.jp help'. To suppress Japanese output, add'/e'     ]
[ at the end of command, e.g. 'whois -h whois.jprs.jp xxx/e'.                 ]

Domain Information:
a. [Domain Name]                GOOGLE.JP
g. [Organization]               Google LLC
l. [Organization Type]          Limited Liability Company
m. [Administrative Contact]     DL152JP
n. [Technical Contact]          TW124137JP
p. [Name Server]                ns1.google.com
p. [Name Server]                ns2.google.com
s. [Signing Key]
[State]                         Connected (2026/05/31)
[Registered Date]               2001/03/22
[Connected Date]                2001/03/22
[Last Update]                   2025/06/01 01:05:03 (JST)
`;

/** whois.tcinet.ru (RIPE style): lower-case keys, `paid-till`, a comma-separated state. */
export const TCINET = `% TCI Whois Service. Terms of use:
% https://tcinet.ru/documents/whois_ru_rf.pdf (in Russian)

domain:        GOOGLE.RU
nserver:       ns1.google.com.
nserver:       ns2.google.com.
state:         REGISTERED, DELEGATED, VERIFIED
org:           Google LLC
taxpayer-id:   7703000000
registrar:     RU-CENTER-RU
admin-contact: https://www.nic.ru/whois
created:       2004-03-03T21:00:00Z
paid-till:     2025-03-04T21:00:00Z
free-date:     2025-04-05
source:        TCI

Last updated on 2024-09-12T11:16:30Z
`;

const KIB = 1024;
/** `head`, then `body` repeated, then `tail`: `size` characters in all. */
function filled(head: string, body: string, tail: string, size: number): string {
  const room = size - head.length - tail.length;
  return head + body.repeat(Math.ceil(room / body.length)).slice(0, room) + tail;
}

/**
 * Answers a hostile or broken server could send, each as large as the client accepts (256 KiB),
 * built against patterns that backtrack (runs of spaces, dots, slashes, colons) and against
 * per-line costs (many short lines). The first is a real record repeated: the baseline.
 */
export function hostileWhoisAnswers(size = 256 * KIB): Record<string, string> {
  return {
    baseline_real_record: filled('', markmonitorAnswer('example.com'), '', size),
    value_with_space_run: filled('Domain Name: x', ' ', 'y', size),
    key_with_space_run: filled('a', ' ', 'b: c', size),
    status_with_space_run: filled('Domain Status: a', ' ', 'b', size),
    date_with_space_run: filled('Creation Date: 2020-01-01', ' ', 'x', size),
    bracket_with_space_run: filled('[Domain Name] x', ' ', 'y', size),
    many_short_lines: filled('', 'a:\n', '', size),
    one_line_of_colons: filled('', ':', '', size),
    one_line_of_dots: filled('a', '.', 'b', size),
    long_domain_name: filled('Domain Name: ', 'a', '.com', size),
    referral_of_slashes: filled('Registrar WHOIS Server: whois://', '/', 'x', size),
    referral_with_space_run: filled('Registrar WHOIS Server', ' ', 'x', size),
  };
}
