package server

import (
	"net"
	"testing"
)

func TestPeerIP(t *testing.T) {
	tests := []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.2"), Port: 1}, "127.0.0.2"},
		{&net.TCPAddr{IP: net.ParseIP("::ffff:10.1.2.3"), Port: 1}, "10.1.2.3"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:aaaa::1"), Port: 1}, "2001:db8:1:2::/64"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:bbbb::9"), Port: 2}, "2001:db8:1:2::/64"},
		{&net.TCPAddr{IP: net.ParseIP("::1"), Port: 1}, "::/64"},
		{&net.UnixAddr{Name: "/run/sluice.sock", Net: "unix"}, "/run/sluice.sock"},
	}
	for _, tt := range tests {
		if got := peerIP(tt.addr); got != tt.want {
			t.Errorf("peerIP(%v) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}
