package upstream

import (
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
)

// go-sdk (v1.8.0) decodes each message from a stdio server three times in its
// IOTransport: once as a batch (an array, which fails), once into its wire
// struct, and once more for the method string alone. Each time it makes a
// fresh 32 KiB buffer (internal/json.Unmarshal over segmentio's Decoder), so
// a tool call's response costs some 100 KB of garbage before the result is
// looked at. Most of a gateway's CPU at load is that garbage collected.
//
// scanEnvelope reads only the envelope of a message (jsonrpc, id, method and
// where params or result lie) and takes the rest as raw bytes, as go-sdk's
// decoder would: the message is passed on as go-sdk's own jsonrpc.Request or
// jsonrpc.Response, the result still decoded by go-sdk where it is used.
// Anything unusual (an error response, an id that is not a plain integer or
// string, a key or value with escapes, a repeated key, a batch, deep
// nesting) is left to jsonrpc.DecodeMessage: the scanner reports ok only
// where it is sure to agree with it, and FuzzScanEnvelope checks that it
// does, for every input the decoder accepts.

// maxExactID is the largest integer id a float64 holds exactly (2^53): go-sdk
// reads ids as float64, so larger ones are left to it.
const maxExactID = 1 << 53

// scanEnvelope returns line, one JSON-RPC message that json.Valid accepts,
// as go-sdk's jsonrpc.DecodeMessage would, and ok; or ok false when it
// cannot be sure to agree with it. The message's params or result alias line.
func scanEnvelope(line []byte) (msg jsonrpc.Message, ok bool) {
	var (
		version, id, method, params, result []byte
		seen                                uint8
		hasError                            bool
	)
	i := jsonscan.SkipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return nil, false
	}
	i = jsonscan.SkipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return nil, false
	}
	for {
		key, next, kok := jsonscan.Key(line, i)
		if !kok {
			return nil, false
		}
		start := jsonscan.SkipSpace(line, next)
		end, vok := jsonscan.SkipValue(line, start)
		if !vok {
			return nil, false
		}
		bit, known := envelopeKeys[string(key)]
		if known {
			if seen&bit != 0 {
				return nil, false // a repeated key: which wins is the decoder's business
			}
			seen |= bit
			v := line[start:end]
			switch bit {
			case keyVersion:
				version = v
			case keyID:
				id = v
			case keyMethod:
				method = v
			case keyParams:
				params = v
			case keyResult:
				result = v
			case keyError:
				hasError = true
			}
		}
		i = jsonscan.SkipSpace(line, end)
		if i >= len(line) {
			return nil, false
		}
		if line[i] == '}' {
			break
		}
		if line[i] != ',' {
			return nil, false
		}
		i = jsonscan.SkipSpace(line, i+1)
	}
	if jsonscan.SkipSpace(line, i+1) != len(line) || string(version) != `"2.0"` {
		return nil, false
	}
	rid, idOK := scanID(id)
	if !idOK {
		return nil, false
	}
	if method != nil {
		name, sok := jsonscan.PlainString(method)
		if !sok || (params != nil && !isContainer(params)) {
			return nil, false
		}
		return &jsonrpc.Request{ID: rid, Method: name, Params: params}, true
	}
	if hasError || !rid.IsValid() || result == nil || !isContainer(result) {
		return nil, false
	}
	return &jsonrpc.Response{ID: rid, Result: result}, true
}

// The keys go-sdk's wire struct decodes, matched exactly (its decoder does
// not match case-insensitively).
const (
	keyVersion uint8 = 1 << iota
	keyID
	keyMethod
	keyParams
	keyResult
	keyError
)

var envelopeKeys = map[string]uint8{
	"jsonrpc": keyVersion, "id": keyID, "method": keyMethod,
	"params": keyParams, "result": keyResult, "error": keyError,
}

func isContainer(v []byte) bool { return v[0] == '{' || v[0] == '[' }

// scanID reads an id: absent (a notification), a plain integer a float64
// holds exactly, or a string of printable ASCII without escapes.
func scanID(v []byte) (jsonrpc.ID, bool) {
	if v == nil {
		return jsonrpc.ID{}, true
	}
	if v[0] == '"' {
		s, ok := jsonscan.PlainString(v)
		if !ok {
			return jsonrpc.ID{}, false
		}
		id, err := jsonrpc.MakeID(s)
		return id, err == nil
	}
	digits := v
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 16 {
		return jsonrpc.ID{}, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return jsonrpc.ID{}, false
		}
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n > maxExactID || n < -maxExactID {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(float64(n))
	return id, err == nil
}
