package pgstore

import "testing"

// TestMAC: a MAC verifies only with its key, its purpose and its exact
// fields; fields that concatenate alike do not share one.
func TestMAC(t *testing.T) {
	store := []byte("0123456789abcdef0123456789abcdef")
	k := DeriveKey(store, "replicas")
	m := MAC(k, "r1", "http://10.0.0.1:8080")
	if !ValidMAC(k, m, "r1", "http://10.0.0.1:8080") {
		t.Fatal("a MAC does not verify with its own key and fields")
	}
	for name, ok := range map[string]bool{
		"other purpose": ValidMAC(DeriveKey(store, "pins"), m, "r1", "http://10.0.0.1:8080"),
		"other key":     ValidMAC(DeriveKey([]byte("another key of thirty-two bytes!"), "replicas"), m, "r1", "http://10.0.0.1:8080"),
		"other url":     ValidMAC(k, m, "r1", "http://10.0.0.2:8080"),
		"shifted field": ValidMAC(k, m, "r1http://10.0.0.1:8080", ""),
		"no key":        ValidMAC(nil, MAC(nil, "r1"), "r1"),
		"empty mac":     ValidMAC(k, "", "r1", "http://10.0.0.1:8080"),
	} {
		if ok {
			t.Errorf("%s: the MAC verifies; want it refused", name)
		}
	}
}
