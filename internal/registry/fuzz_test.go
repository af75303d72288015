package registry

import (
	"testing"
)

// FuzzDecode feeds registry answers to both decoders: they never panic,
// and every entry they return passes Check.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"servers":[{"server":{"name":"io.github.a/b","description":"d","version":"1.0.0","packages":[{"registryType":"npm","identifier":"x","version":"1.0.0","transport":{"type":"stdio"}}]}}],"metadata":{"nextCursor":"n"}}`))
	f.Add([]byte(`{"server":{"name":"io.github.a/b","version":"1","remotes":[{"type":"streamable-http","url":"https://x/{tenant}","variables":{"tenant":{"isRequired":true}}}]}}`))
	f.Add([]byte(`{"servers":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, _, _, err := decodeList(data)
		if err == nil {
			for _, e := range entries {
				if e.Check() != nil {
					t.Fatalf("decodeList returned an entry that fails Check: %+v", e)
				}
				for i := range e.Server.Packages {
					_ = checkPackage(&e.Server.Packages[i])
				}
				for i := range e.Server.Remotes {
					_ = checkRemote(&e.Server.Remotes[i])
				}
				_ = e.Server.NeedsSecret()
			}
		}
		if e, err := decodeEntry(data); err == nil && e.Check() != nil {
			t.Fatalf("decodeEntry returned an entry that fails Check")
		}
	})
}
