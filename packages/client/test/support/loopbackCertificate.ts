/**
 * A self-signed certificate for IP 127.0.0.1 and its private key, for the loopback TLS servers of
 * the tests (an https proxy, an HTTPS front). Test material only: the key is public on purpose,
 * and the certificate is trusted by nothing but the tests that pass it as their CA. Made once with
 * `openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 36500
 * -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1` (valid until 2126-11-13), so that no
 * test needs `openssl` or a clock-dependent certificate.
 */
export const loopbackCertificate = {
  cert: `-----BEGIN CERTIFICATE-----
MIIBkDCCATagAwIBAgIUMrB9MvvcbVK4N4JQGW9ZxZwEBHMwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTIwNzA5MTQxNFoYDzIxMjYxMTEz
MDkxNDE0WjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAS/jaca0Q936cpjtGbQ/LIq1mzq1f1hqtmGuCzNKdacLYc/N2PR7d/W
rdOPSeFnrhxFIbwLv2aTjqfs3tZArXMto2QwYjAdBgNVHQ4EFgQUXE8bEk+DqAnR
3exCAHSmZy+V4sIwHwYDVR0jBBgwFoAUXE8bEk+DqAnR3exCAHSmZy+V4sIwDwYD
VR0TAQH/BAUwAwEB/zAPBgNVHREECDAGhwR/AAABMAoGCCqGSM49BAMCA0gAMEUC
IBHHjdbmNyoiJM1uqOqBHn5cYGSIf6CGkoXCVWuWpodXAiEAp50w6GHivFJ//zs0
lyQp/gzAVnigdIJcmJ7W2kw2u6A=
-----END CERTIFICATE-----
`,
  key: `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgecpEiFETLmL3O14E
Q9PRyynubbttqspY8dNa5qNFg3uhRANCAAS/jaca0Q936cpjtGbQ/LIq1mzq1f1h
qtmGuCzNKdacLYc/N2PR7d/WrdOPSeFnrhxFIbwLv2aTjqfs3tZArXMt
-----END PRIVATE KEY-----
`
} as const
