/** What `openssl ca` needs to sign test certificates in a scratch directory (index, serials, a lax policy). */
export const OPENSSL_CA_CONFIG = `[ ca ]
default_ca = test_ca
[ test_ca ]
database = index.txt
new_certs_dir = issued
# Never read with -rand_serial, but openssl ca insists the setting exists.
serial = serial
default_md = sha256
policy = anything
unique_subject = no
copy_extensions = none
[ anything ]
commonName = supplied
`;

/** GeneralizedTime, YYYYMMDDHHMMSSZ, as `openssl ca -startdate/-enddate` accepts. */
export function opensslTime(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:T]/g, '')
    .replace(/\.\d{3}/, '');
}
