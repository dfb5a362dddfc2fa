// Package mtls builds the mutual-TLS configurations of the bench tools from the same PEM files the
// driver uses (ca.crt, tls.crt, tls.key): servers require and verify a client certificate and
// check its DNS SAN once per connection; clients verify the server's SAN like the driver does.
package mtls

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
)

// Files are the PEM files of one identity and the CA that issued the peers' certificates.
type Files struct {
	CA, Cert, Key string
}

// AddFlags registers -ca, -cert and -key on fs.
func (f *Files) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.CA, "ca", "", "CA certificate (PEM) that issued the peer's certificate")
	fs.StringVar(&f.Cert, "cert", "", "own certificate (PEM)")
	fs.StringVar(&f.Key, "key", "", "own private key (PEM)")
}

// Set reports whether any of the files was given (mutual TLS wanted).
func (f Files) Set() bool { return f.CA != "" || f.Cert != "" || f.Key != "" }

func (f Files) load() (tls.Certificate, *x509.CertPool, error) {
	if f.CA == "" || f.Cert == "" || f.Key == "" {
		return tls.Certificate{}, nil, errors.New("-ca, -cert and -key must be given together")
	}
	cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("-cert/-key: %w", err)
	}
	pem, err := os.ReadFile(f.CA)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return tls.Certificate{}, nil, fmt.Errorf("-ca: %s holds no PEM certificate", f.CA)
	}
	return cert, pool, nil
}

// Server requires a client certificate issued by the CA whose DNS SANs include clientSAN.
func Server(f Files, clientSAN string) (*tls.Config, error) {
	cert, pool, err := f.load()
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS12,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("no client certificate")
			}
			if !slices.Contains(cs.PeerCertificates[0].DNSNames, clientSAN) {
				return fmt.Errorf("client certificate is not for %q", clientSAN)
			}
			return nil
		},
	}, nil
}

// Client presents the own certificate and accepts only a server certificate for serverName.
func Client(f Files, serverName string) (*tls.Config, error) {
	cert, pool, err := f.load()
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		RootCAs:      pool,
		ServerName:   serverName,
		MinVersion:   tls.VersionTLS12,
	}, nil
}
