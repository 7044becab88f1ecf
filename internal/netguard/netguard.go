// Package netguard tells public addresses from the networks a gateway
// runs in, for the requests it makes to places that someone other than the
// operator names: a script's fetch() (pipeline/script) and the external
// $refs of an OpenAPI document (sources/openapi). Such a request is checked
// when it dials, after name resolution and for every redirect, because a
// name may resolve to any address (a DNS answer the operator does not
// control, a name pointed at 169.254.169.254). StayOnOrigin keeps a request
// that carries a secret on the origin it was sent to, through redirects.
package netguard

import (
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// sharedAddressSpace is 100.64.0.0/10 (RFC 6598, carrier-grade NAT), which
// netip does not count as private.
var sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")

// Internal reports whether ip is not a public unicast address: loopback,
// private, link-local, shared (CGNAT), unspecified or multicast.
func Internal(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() || sharedAddressSpace.Contains(ip)
}

// DialAddr is the IP a dialer's Control is about to connect to.
func DialAddr(address string) (netip.Addr, error) {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return netip.Addr{}, err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("dialing %q: not an IP address", host)
	}
	return ip.Unmap(), nil
}

// PublicOnly is a net.Dialer Control that refuses internal addresses.
func PublicOnly(_, address string, _ syscall.RawConn) error {
	ip, err := DialAddr(address)
	if err != nil {
		return err
	}
	if Internal(ip) {
		return fmt.Errorf("%s is an internal address", ip)
	}
	return nil
}
