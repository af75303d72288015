package config

import (
	"net/url"

	"github.com/tailscale/hujson"
)

// telemetry decodes settings.telemetry.
func (d *decoder) telemetry(v *hujson.Value, path string) *Telemetry {
	obj, ok := d.object(v, path)
	if !ok {
		return nil
	}
	t := &Telemetry{}
	for _, m := range d.members(obj, path) {
		p := joinPath(path, m.key)
		switch m.key {
		case "endpoint":
			if str, ok := d.str(m.value, p); ok {
				if u, err := url.Parse(str); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					d.errorf(m.value, p, "must be the http(s) URL of an OTLP/HTTP receiver, such as http://127.0.0.1:4318")
				} else {
					t.Endpoint = str
				}
			}
		default:
			d.unknown(m.value, path, m.key, []string{"endpoint"})
		}
	}
	return t
}
