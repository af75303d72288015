package config

import (
	"net/url"

	"github.com/tailscale/hujson"
)

// registryURL decodes settings.registry: an http(s) URL with no query.
func (d *decoder) registryURL(v *hujson.Value, p string) *string {
	str, ok := d.str(v, p)
	if !ok {
		return nil
	}
	u, err := url.Parse(str)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		d.errorf(v, p, `must be the base URL of an MCP registry, such as "https://registry.modelcontextprotocol.io", not %q`, str)
		return nil
	}
	return &str
}

// HostConfigsRead is settings.hostConfigs's value that reads other hosts'
// files directly.
const HostConfigsRead = "read"

// hostConfigs decodes settings.hostConfigs: "read" or "import".
func (d *decoder) hostConfigs(v *hujson.Value, p string) *string {
	str, ok := d.str(v, p)
	if !ok {
		return nil
	}
	if str != HostConfigsRead && str != "import" {
		d.errorf(v, p, `must be "read" (read every host's MCP servers directly) or "import" (the default: bring them over with switchboard import), not %q`, str)
		return nil
	}
	return &str
}
