package natsengine_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/natsengine"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key,
// and returns their paths (the certificate is its own CA).
func selfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mcprt test hub"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// A hub with TLS and a token: a client with the CA and the token gets
// JetStream; a wrong token, or no CA, is refused with a message saying
// what to check; a port with nothing behind it is unreachable.
func TestHubTLSAndToken(t *testing.T) {
	cert, key := selfSigned(t)
	srv, err := natsengine.StartServer(natsengine.ServerOptions{
		Config:   natsengine.ServerConfig{Listen: "127.0.0.1:0", TLSCert: cert, TLSKey: key},
		StoreDir: t.TempDir(), Token: "tok", SyncAlways: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	if !strings.HasPrefix(srv.ClientURL(), "tls://") {
		t.Fatalf("ClientURL = %s, want tls://", srv.ClientURL())
	}
	cfg := natsengine.DefaultConfig()
	cfg.ConnectTimeout = 2 * time.Second
	cases := []struct {
		name, url, token, ca string
		want                 string // "" for success
	}{
		{"right token and CA", srv.ClientURL(), "tok", cert, ""},
		{"wrong token", srv.ClientURL(), "nope", cert, "refused this client"},
		{"unknown CA", srv.ClientURL(), "tok", "", "refused this client"},
		{"nothing listening", "nats://" + freeAddr(t), "tok", "", "unreachable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			c.Token, c.CAFile = tc.token, tc.ca
			conn, err := natsengine.Connect(context.Background(), natsengine.ConnOptions{Config: c, URL: tc.url})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Connect: %v", err)
				}
				defer conn.Close()
				if _, err := conn.JS.AccountInfo(context.Background()); err != nil {
					t.Fatalf("JetStream: %v", err)
				}
				return
			}
			if err == nil {
				conn.Close()
				t.Fatalf("Connect succeeded, want an error saying %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Connect = %v, want it to say %q", err, tc.want)
			}
			if tc.want == "unreachable" && !errors.Is(err, natsengine.ErrUnreachable) {
				t.Errorf("error does not wrap ErrUnreachable: %v", err)
			}
		})
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func TestStartServerRejectsBadSettings(t *testing.T) {
	cases := []struct {
		name string
		cfg  natsengine.ServerConfig
		want string
	}{
		{"no listen", natsengine.ServerConfig{}, "nats.server.listen is empty"},
		{"bad listen", natsengine.ServerConfig{Listen: "localhost"}, "not host:port"},
		{"bad port", natsengine.ServerConfig{Listen: "127.0.0.1:99999"}, "port"},
		{"missing TLS file", natsengine.ServerConfig{Listen: "127.0.0.1:0", TLSCert: "/nonexistent.pem", TLSKey: "/nonexistent.key"}, "tlsCert"},
		{"cluster without listen", natsengine.ServerConfig{Listen: "127.0.0.1:0", ClusterName: "c"}, "clusterListen"},
		{"bad route", natsengine.ServerConfig{Listen: "127.0.0.1:0", ClusterName: "c", ClusterListen: "127.0.0.1:0", Routes: []string{"::"}}, "route URL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := natsengine.StartServer(natsengine.ServerOptions{Config: tc.cfg, StoreDir: t.TempDir()})
			if err == nil {
				s.Shutdown()
				t.Fatalf("StartServer succeeded, want an error saying %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("StartServer = %v, want it to say %q", err, tc.want)
			}
		})
	}
}
